/// The reading side of one connection as a value: when its socket may be read, and which of the requests read go to
/// the engine next. No I/O: the connection's handler reports what happened and performs what this answers, so every
/// order of reads, answers and room is checked on its own (`ReadGateTests`, exhaustively).
///
/// The rules of §6 it holds:
/// - The requests of a connection are served in the order they were read, one batch with the engine at a time.
/// - While pending output is at `socket.max_pending_bytes`, nothing more is served, and nothing more is read.
/// - After a line longer than `socket.max_line_bytes`, what came before it is served, then the error goes out, the
///   output is closed and nothing more is read; after the client half-closed, what it sent is served, then the
///   output is closed once written.
///
/// Reading goes on while the engine serves a batch, so that a client's next request does not cost the loop a change
/// of the socket's epoll interest and back: at most one read burst more than the batch waits here.
struct ReadGate<Item: ReadGateItem> {
    /// Read, and not yet handed to the engine or answered, in order; the batch with the engine is its prefix.
    private(set) var pending: ArraySlice<Item> = []
    /// How many of `pending` the engine holds (0 while none).
    private(set) var inService = 0
    private(set) var lineTooLong = false
    private(set) var inputClosed = false
    /// NIO asked to read while the gate was closed: the read is made once it opens.
    private(set) var readWithheld = false
    /// The output was closed here: nothing more is read or served.
    private(set) var finished = false

    var serving: Bool { inService > 0 }

    /// What the handler does next, for ``next(output:)``.
    enum Step {
        /// Hand these (all of `pending`) to the engine; report with ``served(_:)``.
        case serve(ArraySlice<Item>)
        /// Queue these ready answers (lines that were not valid requests) on the output; then ask again.
        case answer(ArraySlice<Item>)
        /// Output is at its bound, and requests or a read wait: wait for room (the outbox releases the reader),
        /// then ask again.
        case waitForRoom
        /// Close the output, after the too-long-line error when `lineTooLong`.
        case closeOutput(lineTooLong: Bool)
        /// Nothing to serve: make a withheld read if ``mayRead(outputHasRoom:)``.
        case idle
    }

    /// What the output side says when asked.
    struct Output: Equatable {
        var hasRoom: Bool
        var isClosed: Bool
    }

    /// A batch of the socket, already parsed; `lineTooLong` when a line in it passed the limit (what follows it is
    /// not part of the batch).
    mutating func received(_ items: some Sequence<Item>, lineTooLong tooLong: Bool) {
        guard !lineTooLong, !finished else { return }
        pending.append(contentsOf: items)
        if tooLong { lineTooLong = true }
    }

    /// The connection ends (or is turned away): nothing more is read or served.
    mutating func stop() {
        pending = []
        finished = true
    }

    /// The client half-closed its side.
    mutating func closeInput() {
        inputClosed = true
    }

    /// Whether NIO's read may be passed on now; if not, it is made when the gate opens (``takeWithheldRead``), and
    /// the handler asks for the ``next(output:)`` step, which may be to wait for room.
    mutating func read(outputHasRoom: Bool) -> Bool {
        if mayRead(outputHasRoom: outputHasRoom) { return true }
        readWithheld = true
        return false
    }

    /// Whether a read NIO asked for earlier must be made now.
    mutating func takeWithheldRead(outputHasRoom: Bool) -> Bool {
        guard readWithheld, mayRead(outputHasRoom: outputHasRoom) else { return false }
        readWithheld = false
        return true
    }

    func mayRead(outputHasRoom: Bool) -> Bool {
        !finished && !lineTooLong && !inputClosed && pending.count <= inService && outputHasRoom
    }

    /// The next thing to do. While a batch is with the engine, that is only to wait for room for a withheld read.
    mutating func next(output: Output) -> Step {
        guard !finished else { return .idle }
        // A read withheld at the bound is made when there is room again, which only a waiting reader hears of.
        let readWaits = readWithheld && !output.hasRoom && !output.isClosed
        guard !serving else { return readWaits ? .waitForRoom : .idle }
        if output.isClosed {
            // The connection is ending: what was read is dropped, as nobody would read its answers.
            pending = []
            finished = true
            return .idle
        }
        if pending.isEmpty {
            if lineTooLong || inputClosed {
                finished = true
                return .closeOutput(lineTooLong: lineTooLong)
            }
            return readWaits ? .waitForRoom : .idle
        }
        guard output.hasRoom else { return .waitForRoom }
        guard pending.contains(where: { !$0.isReadyAnswer }) else {
            defer { pending = [] }
            return .answer(pending)
        }
        inService = pending.count
        return .serve(pending)
    }

    /// The engine served the first `count` requests of its batch (all of them, unless the output reached its bound
    /// first).
    mutating func served(_ count: Int) {
        precondition(serving && count <= inService, "a served count for a batch the engine does not hold")
        inService = 0
        pending = pending.dropFirst(count)
    }
}

extension ReadGate.Step: Equatable where Item: Equatable {}

/// What the gate needs to know of a request read.
protocol ReadGateItem {
    /// A line that was not a valid request: its error answer is ready, and the engine need not see it.
    var isReadyAnswer: Bool { get }
}
