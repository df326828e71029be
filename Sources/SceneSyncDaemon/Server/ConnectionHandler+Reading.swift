import NIOCore
import SceneSyncCore

extension ConnectionHandler {
    /// Parses a batch of lines here, before the engine sees it, and serves it once the requests before it are.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lineTooLong else { return }
        let lines = unwrapInboundIn(data)
        var requests = Array(pending)
        requests.reserveCapacity(requests.count + lines.count)
        for item in lines {
            guard case .line(let bytes) = item else {
                lineTooLong = true
                break
            }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            switch Command.parse(bytes) {
            case .failure(let failure):
                requests.append(.answer(ResponseWriter.error(id: failure.id, failure.error)))
            case .success(let request):
                requests.append(.request(request))
            }
        }
        pending = requests[...]
        serveNext()
    }

    /// Hands the engine what is pending, unless a batch is with it already or the output is at its bound; then goes
    /// on reading. Called again when a batch was served and when the outbox has room again.
    func serveNext() {
        guard let connection, !serving else { return }
        let outbox = connection.outbox
        while true {
            if outbox.isClosed {
                pending = []
                return
            }
            if pending.isEmpty {
                if lineTooLong {
                    outbox.enqueue(
                        line: ResponseWriter.error(
                            id: ResponseWriter.nullID,
                            SceneSyncError(
                                .tooLarge,
                                "request line longer than socket.max_line_bytes (\(server.limits.maxLineBytes))")))
                    outbox.close()
                } else if inputClosed {
                    // However the reader ends, the writer still drains what is queued, then closes.
                    outbox.close()
                } else {
                    readIfWithheld()
                }
                return
            }
            // A connection at its output bound is not served or read from (§6) until its client takes some of what
            // is pending: the outbox releases the reader then.
            if !outbox.hasRoom {
                // Already waiting when a read that began before the bound was reached brought more lines.
                if outbox.readerIsWaiting || outbox.readerWaits() { return }
                continue
            }
            guard pending.contains(where: { if case .request = $0 { true } else { false } }) else {
                for case .answer(let line) in pending { outbox.enqueue(line: line) }
                pending = []
                continue
            }
            serve(pending, connection: connection.id, outbox: outbox)
            readIfWithheld()
            return
        }
    }

    /// The engine serves the batch in order, as far as it can in one call (see
    /// ``SceneEngine/serve(_:connection:outbox:resume:)``): both run on the engine loop. A batch that has to wait
    /// resumes the reader once it is served.
    private func serve(_ requests: ArraySlice<InboundRequest>, connection id: UInt64, outbox: Outbox) {
        guard let context else { return }
        inService = requests.count
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let served = server.engine.assumeIsolated { engine in
            engine.serve(requests, connection: id, outbox: outbox) { handler.value.served($0) }
        }
        if let served { self.served(served) }
    }

    /// The engine served the first `count` pending requests (all of them, unless the output reached its bound).
    private func served(_ count: Int) {
        inService = 0
        pending = pending.dropFirst(count)
        serveNext()
    }
}
