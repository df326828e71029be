import SceneSyncCore

@testable import SceneSyncDaemon

/// The client's connection, as the daemon's handler drives it: the requests it sent wait in its socket until the
/// connection's ``ReadGate`` reads them, and their answers wait in its ``Outbox``, whose `max_pending_bytes` is a
/// few answers, until the client reads them. So the gate is often at the bound, with a batch with the engine, a
/// read withheld, or a reader waiting for room; and the engine's commits run while it is.
extension EngineSimulation {
    /// Bytes of one answer line as the client's outbox counts them.
    static let answerBytes = 16
    /// A bound of two answers and a bit: the third one waiting puts the connection at the bound.
    static let clientPendingBytes = 40

    /// The client sends one to three requests, changes or reads (a `get`, answered at once): they wait in the
    /// socket until the gate reads them.
    mutating func clientSends() {
        var sent: [Request] = []
        for _ in 0..<(1 + rng.below(3)) {
            if rng.chance(30) {
                // What a read carries is never planned: it only holds its place in the order.
                let read = EngineCore.ChangeRequest(
                    id: [], operation: .pop(count: 0), scene: scenes[0], ifVersion: nil,
                    origin: Origin(source: .client, client: "simulation"), seenModified: nil)
                sent.append(Request(id: nextID, request: read, eventsTakenBefore: 0, isRead: true))
                nextID += 1
                continue
            }
            let scene = rng.pick(scenes)
            let operation: SceneStore.Operation
            switch rng.below(10) {
            case 0: operation = .delete
            case 1: operation = .push([rng.pick(paths).elements.first].compactMap { $0 })
            case 2: operation = .pop(count: 1)
            default: operation = .set(path: rng.pick(paths).elements, format: nil)
            }
            let ifVersion: UInt64? =
                switch rng.below(4) {
                case 0: nil
                case 1: UInt64(rng.below(4))
                default: store.scene(scene)?.version ?? 0
                }
            let id = nextID
            nextID += 1
            sent.append(
                Request(
                    id: id,
                    request: EngineCore.ChangeRequest(
                        id: Array("\(id)".utf8), operation: operation, scene: scene, ifVersion: ifVersion,
                        origin: Origin(source: .client, client: "simulation"), seenModified: nil),
                    eventsTakenBefore: 0))
        }
        clientSocket += sent
        clientSentOrder += sent.map(\.id)
        note("client sends \(sent.map(\.id))")
        clientSocketReads()
    }

    /// NIO reads the socket when a read was passed on, hands the lines to the gate, and asks to read again.
    mutating func clientSocketReads() {
        guard clientReadOutstanding, !clientSocket.isEmpty else { return }
        let lines = clientSocket
        clientSocket = []
        clientReadOutstanding = false
        clientGate.received(lines, lineTooLong: false)
        note("the connection reads \(lines.map(\.id))")
        clientServeNext()
        // NIO's next read request.
        if clientGate.read(outputHasRoom: clientOutput.hasRoom) {
            passClientRead()
        } else {
            clientServeNext()
        }
    }

    /// A read request passed on to the socket: only below the bound, and with nothing read beyond the batch.
    mutating func passClientRead() {
        if !clientOutput.hasRoom { fail("a read was passed on at the output bound") }
        if clientGate.pending.count > clientGate.inService { fail("a read was passed on with requests waiting") }
        clientReadOutstanding = true
    }

    /// ``ConnectionHandler/serveNext()``: what the gate says, until it says to wait.
    mutating func clientServeNext() {
        for _ in 0..<64 {
            switch clientGate.next(output: .init(hasRoom: clientOutput.hasRoom, isClosed: false)) {
            case .serve(let batch):
                if !clientOutput.hasRoom { fail("a batch was served at the output bound") }
                if clientBatch != nil { fail("a second batch went to the engine") }
                // As the engine serves a batch: reads are answered at once, in order, until the output is at its
                // bound; a run of changes goes to one group commit, whose answer comes later.
                var served = 0
                for request in batch {
                    guard request.isRead, clientOutput.hasRoom else { break }
                    answerClient(request.id)
                    served += 1
                }
                let changes = batch.dropFirst(served).prefix { !$0.isRead }
                guard !changes.isEmpty, clientOutput.hasRoom else {
                    note("the engine answers \(batch.prefix(served).map(\.id)) at once")
                    clientGate.served(served)
                    continue
                }
                // The engine decides them now: what it knows of each scene, and of the watcher, is as of now.
                let group = changes.map { request in
                    Request(
                        id: request.id,
                        request: EngineCore.ChangeRequest(
                            id: request.request.id, operation: request.request.operation,
                            scene: request.request.scene, ifVersion: request.request.ifVersion,
                            origin: request.request.origin, seenModified: store.scene(request.request.scene)?.modified),
                        eventsTakenBefore: eventsTaken)
                }
                clientBatch = group.map(\.id)
                clientServedBeforeBatch = served
                submitted += group.count
                note("the engine serves \(group.map(\.id))")
                start(pipeline.enqueue(group: group))
                clientReadIfWithheld()
                return
            case .waitForRoom:
                if clientOutput.readerIsWaiting || clientOutput.readerWaits() { return }
            case .answer, .closeOutput:
                fail("the gate answered or closed a connection that sent only requests")
                return
            case .idle:
                clientReadIfWithheld()
                return
            }
        }
        fail("the gate never settled")
    }

    /// Queues the answer of a request, checking that it is the one due.
    mutating func answerClient(_ id: Int) {
        let next = clientAnswerOrder.count
        let due = next < clientSentOrder.count ? clientSentOrder[next] : nil
        if due != id { fail("request \(id) answered where request \(due.map(String.init) ?? "none") was due") }
        clientAnswerOrder.append(id)
        clientOutput.enqueue(line: [UInt8](repeating: 0x20, count: Self.answerBytes))
    }

    mutating func clientReadIfWithheld() {
        if clientGate.takeWithheldRead(outputHasRoom: clientOutput.hasRoom) { passClientRead() }
    }

    /// A group commit of the client's batch answered: the answers are queued, in order, and the gate goes on.
    mutating func clientAnswered(_ ids: [Int]) {
        guard ids == clientBatch else {
            fail("answers for \(ids), but the engine held \(clientBatch ?? [])")
            return
        }
        for id in ids { answerClient(id) }
        clientBatch = nil
        clientGate.served(clientServedBeforeBatch + ids.count)
        clientServeNext()
    }

    /// The client reads its answers: the output has room again, and a reader waiting for it goes on.
    mutating func clientReadsAnswers() {
        let waiting = clientOutput.readerIsWaiting
        let batch = clientOutput.takeQueued()
        guard !batch.isEmpty else { return }
        clientOutput.wrote()
        clientAnswersRead += batch.count
        if waiting, !clientOutput.readerIsWaiting {
            clientServeNext()
            clientSocketReads()
        }
    }

    /// The connection is idle and its client has read everything: nothing it sent is left unanswered.
    var clientIsSettled: Bool {
        clientSocket.isEmpty && clientGate.pending.isEmpty && clientBatch == nil
            && clientAnswersRead == clientAnswerOrder.count
    }

    /// One step toward ``clientIsSettled``.
    mutating func settleClient() {
        clientReadsAnswers()
        clientSocketReads()
    }
}

extension EngineSimulation.Request: ReadGateItem {
    var isReadyAnswer: Bool { false }
}
