@testable import SceneSyncDaemon

/// The reading side of a harness client, as ``ConnectionHandler`` drives its ``ReadGate`` (ConnectionHandler.swift,
/// ConnectionHandler+Reading.swift): NIO's read requests are passed on or held back, a read passed on takes what
/// the client wrote, the gate's next step is done until it says to wait, and the outbox's release hook
/// (``EngineHarness/connect(limits:)``) asks again once the client made room. Each step is checked against §6:
/// nothing is read at the output bound or beyond the batch with the engine, nothing is served at the bound, and one
/// batch is with the engine at a time.
extension HarnessClient {
    /// The client writes a request: it waits in the socket until a read takes it.
    func write(_ request: InboundRequest) {
        socket.append(request)
        socketReads()
    }

    /// NIO reads the socket where a read was passed on and the client wrote something: the lines go to the gate,
    /// and NIO asks to read again (`channelRead`, then `read`).
    func socketReads() {
        guard readOutstanding, !socket.isEmpty else { return }
        readOutstanding = false
        let lines = socket
        socket = []
        gate.received(lines, lineTooLong: false)
        serveNext()
        nioRead()
    }

    /// NIO's read request (``ConnectionHandler/read(context:)``): passed on only while the gate lets it.
    func nioRead() {
        if gate.read(outputHasRoom: outbox.hasRoom) {
            passRead()
        } else {
            serveNext()
        }
    }

    /// ``ConnectionHandler/readIfWithheld()``.
    func readIfWithheld() {
        if gate.takeWithheldRead(outputHasRoom: outbox.hasRoom) { passRead() }
    }

    private func passRead() {
        if !outbox.hasRoom { problems.append("a read was passed on at the output bound") }
        if gate.pending.count > gate.inService { problems.append("a read was passed on with requests waiting") }
        readOutstanding = true
    }

    /// ``ConnectionHandler/serveNext()``: what the gate says, until it says to wait.
    func serveNext() {
        for _ in 0..<64 {
            switch gate.next(output: .init(hasRoom: outbox.hasRoom, isClosed: outbox.isClosed)) {
            case .serve(let batch):
                if !outbox.hasRoom { problems.append("a batch was served at the output bound") }
                if batchWithEngine { problems.append("a second batch went to the engine") }
                hand(batch)
                readIfWithheld()
                return
            case .answer, .closeOutput:
                problems.append("the gate answered or closed a connection that sent only valid requests")
                return
            case .waitForRoom:
                if outbox.readerIsWaiting || outbox.readerWaits() { return }
            case .idle:
                readIfWithheld()
                return
            }
        }
        problems.append("the gate never settles")
    }

    /// Hands a batch to the engine, noting when each request was first handed over; a count served at once goes
    /// back to the gate at once, as in the handler.
    private func hand(_ batch: ArraySlice<InboundRequest>) {
        batchWithEngine = true
        let moment = Moment(
            revision: harness.core.store.revision, appWrites: harness.appWritesMade,
            failedWrites: harness.faults.firedCount)
        for offset in servedCount..<min(servedCount + batch.count, sent.count) where sent[offset].handedOver == nil {
            sent[offset].handedOver = moment
        }
        let resumed = resumed
        harness.send(
            .requests(
                batch, connection: connection, outbox: outbox, resume: { resumed.post($0) },
                reply: { served in if let served { resumed.post(served) } }))
        takeServed()
    }

    /// Takes the counts the engine reported served: the gate goes on (``ConnectionHandler``'s `served`).
    func takeServed() {
        for count in resumed.takeAll() {
            if !batchWithEngine { problems.append("the engine served \(count) requests of no batch") }
            batchWithEngine = false
            servedCount += count
            gate.served(count)
            serveNext()
        }
    }
}
