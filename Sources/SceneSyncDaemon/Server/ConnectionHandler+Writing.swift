import NIOCore

#if canImport(Glibc)
import Glibc
#endif

extension ConnectionHandler {
    /// The outbox woke the writer: everything queued in this loop turn goes out together, in one write at its end
    /// (``TurnFlusher``).
    func scheduleWrite() {
        guard !writeScheduled, context != nil else { return }
        writeScheduled = true
        server.flusher.schedule(self)
    }

    /// The loop turn ended: write what was queued.
    func drainScheduled() {
        writeScheduled = false
        drain()
    }

    /// Writes what the outbox holds until it is empty (the writer then waits for its wake), a write is in flight
    /// (it goes on when the socket took it), or the output is closed and written (the connection closes).
    ///
    /// A write the socket takes at once completes inside `writeAndFlush`; its completion then only marks the write
    /// done, and this loop goes on, so a long catch-up does not recurse.
    func drain() {
        guard isOpen, let context, let outbox = connection?.outbox, !draining else { return }
        draining = true
        defer { draining = false }
        // Once the socket is gone (a write failed), nothing more is filled or written: the outbox is closed.
        while !writeInFlight, isOpen {
            if fillBuffer() {
                send(context, endsBatch: false)
                continue
            }
            if holdsBatch {
                if buffer.readableBytes > 0 {
                    send(context, endsBatch: true)
                } else {
                    finishBatch()
                }
                continue
            }
            switch outbox.take() {
            case .batch(let items):
                let emptied = batch
                batch = items
                outbox.recycle(emptied)
                holdsBatch = true
                batchEvents = 0
            case .nothingQueued:
                // Already waiting for the wake-up: nothing to do until it comes.
                if outbox.writerIsWaiting || outbox.writerWaits() { return }
            case .finished:
                context.close(promise: nil)
                return
            }
        }
    }

    /// Writes the held batch's items into the buffer until it holds ``ConnectionHandler/writeChunk`` bytes (true:
    /// send it and come back) or the batch is done (false). The markers have the engine act now: a lag marker
    /// queues the subscription's resync behind this batch, a catch-up marker is replaced by its `state` events.
    private func fillBuffer() -> Bool {
        Self.fill(&buffer, from: &batch, events: &batchEvents, handler: self)
    }

    /// ``fillBuffer()`` on the buffer and the batch as arguments: the handler's properties are then accessed once
    /// per fill, not once per item (each access of a class's property is checked for exclusivity), and each item
    /// is moved out of the batch, not copied. What the engine does for a marker touches neither.
    private static func fill(
        _ buffer: inout ByteBuffer, from batch: inout CircularBuffer<ConnectionOutput.Item>, events: inout Int,
        handler: ConnectionHandler
    ) -> Bool {
        let engine = handler.server.engine
        while true {
            if let subscription = handler.catchingUp {
                guard let chunk = engine.nextCatchUpChunk(subscription: subscription) else {
                    handler.catchingUp = nil
                    continue
                }
                buffer.writeBytes(chunk.lines)
                events += chunk.events
                if chunk.isLast { handler.catchingUp = nil }
                if buffer.readableBytes >= writeChunk { return true }
                continue
            }
            guard let item = batch.popFirst() else { return false }
            switch item {
            case .lagged(let subscription):
                engine.resyncLagged(subscription: subscription)
            case .catchUp(let subscription):
                handler.catchingUp = subscription
            case .event:
                events += 1
                item.write(to: &buffer)
            case .line:
                item.write(to: &buffer)
            }
            if buffer.readableBytes >= writeChunk { return true }
        }
    }

    /// Hands the buffer to the socket. Its bytes stay pending (§6) until the socket took all of them; then the
    /// connection moved, and, at the end of a batch, the batch is reported written.
    ///
    /// The buffer goes out with one `send(2)` when the socket takes all of it, as it does for a reader that keeps
    /// up: no promise, closure or pending-write entry of NIO's, which cost as much as the system call itself when a
    /// change goes to a hundred subscribers. What the socket does not take at once goes through the channel, which
    /// waits for the socket to be writable; nothing else is written until it completed, so the bytes stay in order.
    func send(_ context: ChannelHandlerContext, endsBatch: Bool) {
        if sendDirectly() {
            buffer.clear()
            return tookAll(endsBatch: endsBatch)
        }
        writeInFlight = true
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: promise)
        // The channel has let go of the bytes when the write completed at once; the storage is then reused.
        buffer.clear()
        promise.futureResult.assumeIsolated().whenComplete { result in
            self.writeInFlight = false
            switch result {
            case .success:
                self.tookAll(endsBatch: endsBatch)
                self.drain()
            case .failure:
                // The peer is gone: nothing more is written or served.
                self.isOpen = false
                self.connection?.outbox.close()
                context.close(promise: nil)
            }
        }
    }

    /// The socket took every byte of a write: the connection moved, and the batch is written if the write ended it.
    private func tookAll(endsBatch: Bool) {
        if endsBatch { finishBatch() } else { connection?.outbox.noteProgress(at: server.flusher.now) }
    }

    /// One non-blocking `send(2)` of the buffer: true when the socket took all of it. What it took of it is
    /// consumed. A full socket, or any error, leaves the rest to the channel, which reports errors as for any write.
    private func sendDirectly() -> Bool {
        // Once NIO closed the descriptor, its number may belong to a file by now.
        guard isOpen else { return false }
        let descriptor = socketFD
        let sent = buffer.withUnsafeReadableBytes { bytes in
            Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        guard sent > 0 else { return false }
        if sent == buffer.readableBytes { return true }
        buffer.moveReaderIndex(forwardBy: sent)
        connection?.outbox.noteProgress(at: server.flusher.now)
        return false
    }

    private func finishBatch() {
        guard let outbox = connection?.outbox else { return }
        holdsBatch = false
        let events = batchEvents
        batchEvents = 0
        server.flusher.delivered(events: events, queuedAt: outbox.wrote(at: server.flusher.now))
    }
}
