import Testing

@testable import SceneSyncDaemon

/// The reading side of a connection as a value, checked on every schedule of what can happen to it up to a length:
/// reads, NIO's read requests, the engine serving, the output filling, emptying and closing, a half-close and an
/// overlong line. The test plays the handler (``ConnectionHandler/serveNext()``) after every input.
@Suite struct ReadGateTests {
    struct Item: ReadGateItem, Equatable {
        let number: Int
        let isReadyAnswer: Bool
    }

    enum Input: CaseIterable {
        /// A read brings a request, an invalid line (its answer ready), or a request then an overlong line.
        case request, invalidLine, requestThenTooLong
        /// NIO asks to read.
        case readRequest
        /// The engine serves its whole batch, or only its first request (the output reached its bound).
        case servedAll, servedOne
        /// Pending output reaches its bound, or falls below it (the outbox releases a waiting reader).
        case outputFull, outputRoom
        case outputClosed, inputClosed
    }

    /// The handler around the gate, and what the test records of it.
    struct World {
        var gate = ReadGate<Item>()
        var hasRoom = true
        var outputClosed = false
        var readerWaiting = false
        /// NIO's reads passed on and not yet answered by a read.
        var readOutstanding = true
        var nextNumber = 0
        var received: [Item] = []
        /// What reached the engine or the output as an answer, in order.
        var handled: [Item] = []
        var batchWithEngine: ArraySlice<Item>? = nil
        var closedWithError = 0
        var closedPlain = 0
        var failure: String? = nil
        var history: [Input] = []

        mutating func fail(_ message: String) {
            if failure == nil { failure = message }
        }

        /// ``ConnectionHandler/serveNext()``.
        mutating func serveNext() {
            for _ in 0..<8 {
                switch gate.next(output: .init(hasRoom: hasRoom, isClosed: outputClosed)) {
                case .serve(let batch):
                    if batchWithEngine != nil { fail("a second batch went to the engine") }
                    if !hasRoom { fail("served at the output bound") }
                    batchWithEngine = batch
                    readIfWithheld()
                    return
                case .answer(let answers):
                    if !hasRoom { fail("answered at the output bound") }
                    if answers.contains(where: { !$0.isReadyAnswer }) { fail("a request answered without the engine") }
                    handled += answers
                case .waitForRoom:
                    if hasRoom { fail("waits for room it has") }
                    readerWaiting = true
                    return
                case .closeOutput(let lineTooLong):
                    if lineTooLong { closedWithError += 1 } else { closedPlain += 1 }
                    outputClosed = true
                    return
                case .idle:
                    readIfWithheld()
                    return
                }
            }
            fail("the gate never settled")
        }

        mutating func readIfWithheld() {
            if gate.takeWithheldRead(outputHasRoom: hasRoom) { passRead() }
        }

        mutating func passRead() {
            if !hasRoom { fail("read at the output bound") }
            if gate.pending.count > gate.inService { fail("read with requests waiting beyond the batch") }
            if gate.lineTooLong || gate.inputClosed || gate.finished { fail("read after the input ended") }
            readOutstanding = true
        }

        mutating func read(_ items: [Item], tooLong: Bool) {
            received += items
            gate.received(items, lineTooLong: tooLong)
            readOutstanding = false
            serveNext()
        }

        mutating func item(answer: Bool) -> Item {
            defer { nextNumber += 1 }
            return Item(number: nextNumber, isReadyAnswer: answer)
        }

        /// Applies `input`; false when it cannot happen now.
        mutating func apply(_ input: Input) -> Bool {
            history.append(input)
            switch input {
            case .request, .invalidLine, .requestThenTooLong:
                // Data arrives only for a read NIO was allowed to make, and not after the input ended.
                guard readOutstanding, !gate.inputClosed else { return false }
                let items = [item(answer: input == .invalidLine)]
                read(items, tooLong: input == .requestThenTooLong)
            case .readRequest:
                guard !readOutstanding else { return false }
                if gate.read(outputHasRoom: hasRoom) {
                    passRead()
                } else {
                    serveNext()
                }
            case .servedAll, .servedOne:
                guard let batch = batchWithEngine else { return false }
                let count = input == .servedAll ? batch.count : 1
                handled += batch.prefix(count)
                batchWithEngine = nil
                gate.served(count)
                serveNext()
            case .outputFull:
                guard hasRoom, !outputClosed else { return false }
                hasRoom = false
            case .outputRoom:
                guard !hasRoom else { return false }
                hasRoom = true
                if readerWaiting {
                    readerWaiting = false
                    serveNext()
                }
            case .outputClosed:
                guard !outputClosed else { return false }
                outputClosed = true
                // A waiting reader is released by the close.
                readerWaiting = false
                serveNext()
            case .inputClosed:
                guard !gate.inputClosed else { return false }
                gate.closeInput()
                serveNext()
            }
            return failure == nil
        }

        /// What must hold whenever the handler is waiting for the next input.
        mutating func checkAtRest() {
            // Requests are handled once each, in the order read, and a prefix of them: nothing skipped.
            if handled != Array(received.prefix(handled.count)) { fail("handled out of order or twice") }
            let unhandled = received.count - handled.count
            let held = gate.pending.count
            // Only a close from outside (the connection ending) drops what was read.
            let closedFromOutside = outputClosed && closedPlain + closedWithError == 0
            if !closedFromOutside, unhandled != held { fail("\(unhandled) unhandled but \(held) pending") }
            if closedPlain + closedWithError > 1 { fail("the output was closed twice") }
            // Progress: with room, nothing with the engine and something pending, the gate must not be idle.
            if batchWithEngine == nil, hasRoom, !outputClosed, !gate.pending.isEmpty {
                fail("requests wait with room and nothing served")
            }
            if !readerWaiting, !hasRoom, batchWithEngine == nil, !gate.pending.isEmpty, !outputClosed {
                fail("requests wait at the bound with nobody to release them")
            }
            // A read NIO asked for is made once the gate is open (a closed output reads nothing more).
            if gate.readWithheld, gate.mayRead(outputHasRoom: hasRoom), !outputClosed {
                fail("a withheld read was never made")
            }
            // However the input ends, the output is closed once everything read was handled.
            if (gate.lineTooLong || gate.inputClosed), gate.pending.isEmpty, batchWithEngine == nil, !outputClosed {
                fail("the input ended and everything was handled, but the output stays open")
            }
            if gate.lineTooLong, closedPlain > 0 { fail("an overlong line closed without its error") }
        }
    }

    /// Every schedule of up to 10 inputs (over 500,000 of them).
    @Test func everyScheduleHandlesEachRequestOnceInOrderWithinTheBound() {
        var worlds: [World] = [World()]
        var checked = 0
        for _ in 0..<10 {
            var next: [World] = []
            for world in worlds {
                for input in Input.allCases {
                    var candidate = world
                    guard candidate.apply(input) else {
                        if let failure = candidate.failure {
                            Issue.record("\(candidate.history): \(failure)")
                            return
                        }
                        continue
                    }
                    candidate.checkAtRest()
                    if let failure = candidate.failure {
                        Issue.record("after \(candidate.history): \(failure)")
                        return
                    }
                    checked += 1
                    next.append(candidate)
                }
            }
            worlds = next
        }
        #expect(checked > 500_000)
    }

    @Test func anOverlongLineClosesTheOutputAfterWhatCameBeforeIt() {
        var world = World()
        let request = world.item(answer: false)
        world.read([request], tooLong: true)
        #expect(world.batchWithEngine?.count == 1 && world.closedWithError == 0)
        _ = world.apply(.servedAll)
        #expect(world.closedWithError == 1 && world.outputClosed)
        #expect(!world.gate.mayRead(outputHasRoom: true))
    }

    @Test func atTheBoundNothingIsServedOrReadUntilThereIsRoom() {
        var world = World()
        let first = world.item(answer: false)
        world.read([first], tooLong: false)
        let filled = world.apply(.outputFull)
        let served = world.apply(.servedOne)
        #expect(filled && served)
        // The read that finished meanwhile brought more; it waits.
        world.readOutstanding = true
        let second = world.item(answer: false)
        world.read([second], tooLong: false)
        #expect(world.batchWithEngine == nil && world.readerWaiting)
        let readAtTheBound = world.gate.read(outputHasRoom: world.hasRoom)
        let released = world.apply(.outputRoom)
        #expect(!readAtTheBound && released)
        #expect(world.batchWithEngine?.map(\.number) == [1])
    }

    @Test func aServedCountBeyondTheBatchIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            var gate = ReadGate<Item>()
            gate.received([Item(number: 0, isReadyAnswer: false)], lineTooLong: false)
            _ = gate.next(output: .init(hasRoom: true, isClosed: false))
            gate.served(2)
        }
    }
}
