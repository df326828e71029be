import NIOCore
import SceneSyncCore

extension ConnectionHandler {
    /// Parses a batch of lines here, before the engine sees it, and serves it once the requests before it are.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let lines = unwrapInboundIn(data)
        var requests: [InboundRequest] = []
        requests.reserveCapacity(lines.count)
        var tooLong = false
        for item in lines {
            guard case .line(let bytes) = item else {
                tooLong = true
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
        gate.received(requests, lineTooLong: tooLong)
        serveNext()
    }

    /// Does what the gate says next until it says to wait: hands the engine what is pending, queues ready answers,
    /// waits for room, or closes the output. Called again when a batch was served and when the outbox has room
    /// again.
    func serveNext() {
        guard let connection else { return }
        let outbox = connection.outbox
        while true {
            switch gate.next(output: .init(hasRoom: outbox.hasRoom, isClosed: outbox.isClosed)) {
            case .serve(let requests):
                serve(requests, connection: connection.id, outbox: outbox)
                readIfWithheld()
                return
            case .answer(let answers):
                for case .answer(let line) in answers { outbox.enqueue(line: line) }
            case .waitForRoom:
                // Already waiting when a read that began before the bound was reached brought more lines.
                if outbox.readerIsWaiting || outbox.readerWaits() { return }
            case .closeOutput(let lineTooLong):
                // However the reader ends, the writer still drains what is queued, then closes.
                if lineTooLong {
                    outbox.enqueue(
                        line: ResponseWriter.error(
                            id: ResponseWriter.nullID,
                            SceneSyncError(
                                .tooLarge,
                                "request line longer than socket.max_line_bytes (\(server.limits.maxLineBytes))")))
                }
                outbox.close()
                return
            case .idle:
                readIfWithheld()
                return
            }
        }
    }

    /// The engine serves the batch in order, as far as it can in one call (see
    /// ``EngineCore/serve(_:connection:outbox:resume:)``): both run on the engine loop. A batch that has to wait
    /// resumes the reader once it is served.
    private func serve(_ requests: ArraySlice<InboundRequest>, connection id: UInt64, outbox: Outbox) {
        guard let context else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let served = server.engine.serve(requests, connection: id, outbox: outbox) { handler.value.served($0) }
        if let served { self.served(served) }
    }

    /// The engine served the first `count` pending requests (all of them, unless the output reached its bound).
    private func served(_ count: Int) {
        gate.served(count)
        serveNext()
    }
}
