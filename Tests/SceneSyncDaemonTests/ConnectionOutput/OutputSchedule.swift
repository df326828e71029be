import SceneSyncTestKit

@testable import SceneSyncDaemon

/// One seeded schedule of every input of ``ConnectionOutput``, played as the engine, the connection's writer and
/// its reader play them, beside an ``OutputModel``. After each input it checks that the value's outcome is the
/// model's, and that the invariants of §6 hold on the value itself (checked on what it holds, not on the model).
/// Only inputs the shell can make are played: the writer takes only when it is not waiting, reports written only
/// what it took, flushes only once it reported its batch; the reader waits for room only once at a time.
struct OutputSchedule {
    enum Writer: Equatable {
        /// Between batches, or holding one.
        case free
        /// Found nothing to take, and is about to wait.
        case foundNothing
        case waiting
        /// Was told the output is closed and drained.
        case finished
    }

    enum Input: CaseIterable {
        case line, event, catchUp, clearLag, forget, take, writerWaits, wrote, flush, noteProgress, readerWaits
        case close
    }

    /// How often each input is picked, relatively. `close` is rare, so that most schedules run a while first (about
    /// half of them close only once their steps are done), and the writer takes often enough to find nothing.
    static let weights: [(Input, Int)] = [
        (.line, 36), (.event, 100), (.catchUp, 9), (.clearLag, 15), (.forget, 6), (.take, 60), (.writerWaits, 30),
        (.wrote, 30), (.flush, 3), (.noteProgress, 12), (.readerWaits, 24), (.close, 1),
    ]

    /// Event names and whether they count against `subscriber_queue`, as the engine queues them: live events do,
    /// a catch-up's `state`, `resync` and `synced` do not.
    static let kinds: [(name: EventName, counted: Bool)] = [
        (.change, true), (.change, true), (.change, true), (.phase, true), (.state, false), (.resync, false),
        (.synced, false),
    ]
    static let countedNames: Set<String> = ["change", "phase"]

    let seed: UInt64
    let timeout: Duration = .seconds(10)
    var output: ConnectionOutput
    var model: OutputModel
    var random: SplitMix64
    var now: LoopInstant
    var serial = 0
    /// Three live subscriptions; a forgotten one is replaced by a new ID, as the engine never reuses one.
    var subscriptions: [UInt64] = [1, 2, 3]
    var nextSubscription: UInt64 = 4
    var writer = Writer.free
    /// What the writer took and has not reported written.
    var held: [OutputToken]? = nil
    var readerWaiting = false
    /// A lag dropped costed events while the reader waited: the room it made is the reader's at the next write,
    /// not at once (the daemon has always done so, and a write always follows, since the lag marker is queued).
    var lagFreedRoom = false
    private(set) var violation: String? = nil
    private(set) var trace: [String] = []
    private(set) var coverage = Coverage()

    /// What happened at least once, so that a test can require that the schedules reached every bound.
    struct Coverage {
        var lags = 0
        var droppedWhileLagging = 0
        var readerBlocked = 0
        var readerReleased = 0
        var writerWoken = 0
        var stalled = 0
        var refusedAfterClose = 0

        mutating func add(_ other: Coverage) {
            lags += other.lags
            droppedWhileLagging += other.droppedWhileLagging
            readerBlocked += other.readerBlocked
            readerReleased += other.readerReleased
            writerWoken += other.writerWoken
            stalled += other.stalled
            refusedAfterClose += other.refusedAfterClose
        }
    }

    // What the invariants need beyond the value itself.
    /// Every item the writer took, in order.
    private(set) var taken: [OutputToken] = []
    /// Every line, event and catch-up marker the value said it queued.
    private(set) var accepted: [OutputToken] = []
    /// Lag markers still queued from a lag already cleared or forgotten: the next ones the writer meets.
    private var staleMarkers: [UInt64: Int] = [:]
    /// Lagging subscriptions whose marker the writer took.
    private var markerTaken: Set<UInt64> = []
    /// The serial of the first input after the close, and how many items were queued then.
    private var closedAt: (serial: Int, queued: Int)? = nil

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix64(seed: seed)
        let bounds = ConnectionOutput.Bounds(
            subscriberQueue: 1 + random.below(4), maxPendingBytes: random.pick([1, 60, 200, 600]))
        now = LoopInstant.now
        output = ConnectionOutput(bounds: bounds, now: now)
        model = OutputModel(bounds: bounds, now: now)
        trace.append("bounds \(bounds)")
    }

    mutating func fail(_ message: String) {
        if violation == nil { violation = message + "; inputs: " + trace.suffix(12).joined(separator: ", ") }
    }

    // MARK: - Inputs

    mutating func step() {
        if random.chance(70) { now += .milliseconds(random.below(15_000)) }
        var input = pick()
        while !isPlayable(input) { input = pick() }
        play(input)
        check()
    }

    private mutating func pick() -> Input {
        var roll = random.below(Self.weights.map(\.1).reduce(0, +))
        for (input, weight) in Self.weights {
            if roll < weight { return input }
            roll -= weight
        }
        return .event
    }

    private func isPlayable(_ input: Input) -> Bool {
        switch input {
        case .take: writer == .free || writer == .finished
        case .writerWaits: writer == .foundNothing
        case .wrote: held != nil
        case .flush: held == nil
        case .readerWaits: !readerWaiting
        default: true
        }
    }

    mutating func play(_ input: Input) {
        switch input {
        case .line:
            serial += 1
            let bytes = OutputToken.bytes(serial: serial, size: 1 + random.below(120))
            trace.append("line#\(serial)")
            enqueued(output.enqueue(line: bytes, at: now), OutputToken(.line(bytes)), counted: false)
        case .event:
            serial += 1
            let subscription = random.pick(subscriptions)
            let kind = random.pick(Self.kinds)
            let body = OutputToken.bytes(serial: serial, size: random.below(40))
            trace.append("\(subscription):\(kind.name.rawValue)#\(serial)")
            let outcome = output.enqueue(
                subscription: subscription, event: kind.name, body: body, counted: kind.counted, at: now)
            enqueued(
                outcome, OutputToken(.event(subscription: subscription, name: kind.name, body: body)),
                counted: kind.counted)
        case .catchUp:
            let subscription = random.pick(subscriptions)
            trace.append("\(subscription):catchUp")
            enqueued(
                output.enqueueCatchUp(subscription: subscription, at: now), .catchUp(subscription: subscription),
                counted: false)
        case .clearLag:
            let subscription = random.pick(subscriptions)
            trace.append("clearLag \(subscription)")
            endLagEpisode(subscription)
            output.clearLag(subscription: subscription)
            model.clearLag(subscription)
        case .forget:
            let index = random.below(subscriptions.count)
            let subscription = subscriptions[index]
            trace.append("forget \(subscription)")
            endLagEpisode(subscription)
            output.forget(subscription: subscription)
            model.forget(subscription)
            subscriptions[index] = nextSubscription
            nextSubscription += 1
        case .take:
            take()
        case .writerWaits:
            let waits = output.writerWaits()
            trace.append("writerWaits \(waits)")
            if waits != model.writerWaits() { fail("the writer waits: \(waits), the model says \(!waits)") }
            writer = waits ? .waiting : .free
        case .wrote:
            trace.append("wrote")
            let written = output.wrote(at: now)
            let expected = model.wrote(at: now)
            if written != expected { fail("wrote: \(written), the model says \(expected)") }
            held = nil
            lagFreedRoom = false
            if written.releaseReader {
                if !readerWaiting { fail("a write released a reader that was not waiting") }
                readerWaiting = false
                coverage.readerReleased += 1
            }
        case .flush:
            trace.append("flush")
            output.flushing(at: now)
            model.flushing(at: now)
            held = []
        case .noteProgress:
            trace.append("progress")
            output.noteProgress(at: now)
            model.noteProgress(at: now)
        case .readerWaits:
            let waits = output.readerWaits()
            trace.append("readerWaits \(waits)")
            if waits != model.readerWaits() { fail("the reader waits: \(waits), the model says \(!waits)") }
            // §6: no reading while at the bound, and reading as soon as below it.
            let atBound = !output.isClosed && expectedPending >= output.bounds.maxPendingBytes
            if waits != atBound { fail("the reader waits: \(waits), with \(expectedPending) bytes pending") }
            readerWaiting = waits
            if waits { coverage.readerBlocked += 1 }
        case .close:
            trace.append("close")
            if closedAt == nil { closedAt = (serial + 1, output.items.count) }
            let closed = output.close()
            let expected = model.close()
            if closed != expected { fail("close: \(closed), the model says \(expected)") }
            if closed.wakeWriter {
                if writer != .waiting { fail("the close woke a writer that was not waiting") }
                writer = .free
            }
            if closed.releaseReader {
                if !readerWaiting { fail("the close released a reader that was not waiting") }
                readerWaiting = false
                lagFreedRoom = false
            }
        }
    }

    private mutating func enqueued(_ outcome: ConnectionOutput.Enqueued, _ token: OutputToken, counted: Bool) {
        let expected = model.enqueue(token, counted: counted, at: now)
        if outcome != expected { fail("\(token): \(outcome), the model says \(expected)") }
        if closedAt != nil && outcome != .refused { fail("\(token) was queued after the close") }
        switch outcome {
        case .queued: accepted.append(token)
        case .lagStarted:
            coverage.lags += 1
            if readerWaiting && output.hasRoom { lagFreedRoom = true }
        case .droppedWhileLagging: coverage.droppedWhileLagging += 1
        case .refused: coverage.refusedAfterClose += 1
        }
        if outcome.wakesWriter {
            if writer != .waiting { fail("\(token) woke a writer that was not waiting") }
            writer = .free
            coverage.writerWoken += 1
        }
    }

    private mutating func take() {
        let take = output.takeAll()
        let expected = model.takeAll()
        switch take {
        case .batch(let items):
            let tokens = items.map(OutputToken.init)
            trace.append("take \(tokens.count)")
            if tokens != expected.tokens { fail("took \(tokens), the model says \(expected.tokens ?? [])") }
            if tokens.isEmpty { fail("an empty batch") }
            held = (held ?? []) + tokens
            writer = .free
            writerMeets(tokens)
        case .nothingQueued:
            trace.append("take none")
            if expected.tokens != nil || expected.finished { fail("found nothing, the model says \(expected)") }
            writer = .foundNothing
        case .finished:
            trace.append("take finished")
            if expected.tokens != nil || !expected.finished { fail("finished, the model says \(expected)") }
            writer = .finished
        }
    }

    /// A lag ends (its resync is queued, or the subscription is gone): markers of it still queued are stale.
    private mutating func endLagEpisode(_ subscription: UInt64) {
        staleMarkers[subscription] =
            output.items.filter { OutputToken($0) == .lagged(subscription: subscription) }
            .count
        markerTaken.remove(subscription)
    }

    /// The writer meets what it took in order: a lagging subscription's marker once, and none of its events after.
    private mutating func writerMeets(_ tokens: [OutputToken]) {
        for token in tokens {
            switch token {
            case .lagged(let subscription):
                if let stale = staleMarkers[subscription], stale > 0 {
                    staleMarkers[subscription] = stale - 1
                } else if !output.lagging.contains(subscription) {
                    fail("a lag marker of \(subscription), which does not lag")
                } else if !markerTaken.insert(subscription).inserted {
                    fail("a second lag marker of \(subscription) in one lag")
                }
            case .event(let subscription, _, _, _) where markerTaken.contains(subscription):
                fail("\(token) follows its subscription's lag marker before the resync")
            default:
                break
            }
        }
        taken += tokens
    }

    // MARK: - Invariants

    /// What is pending by the bytes of what the value holds and the writer holds, priced without the value.
    var expectedPending: Int {
        output.items.map { OutputToken($0).cost }.reduce(0, +) + (held ?? []).map(\.cost).reduce(0, +)
    }

    mutating func check() {
        let items = output.items.map(OutputToken.init)
        if items != model.queue.map(\.token) { fail("queued \(items), the model says \(model.queue.map(\.token))") }
        let bounds = output.bounds

        // At most `subscriber_queue` live events queued per subscription.
        var live: [UInt64: Int] = [:]
        for case .event(let subscription, let name, _, _) in items where Self.countedNames.contains(name) {
            live[subscription, default: 0] += 1
        }
        for (subscription, count) in live where count > bounds.subscriberQueue {
            fail("\(subscription) has \(count) live events queued, over its bound of \(bounds.subscriberQueue)")
        }

        // A lagging subscription has exactly one marker, and nothing of its events after it, until its lag ends.
        if output.lagging != model.lagging { fail("lagging \(output.lagging), the model says \(model.lagging)") }
        for subscription in Set(items.compactMap(\.subscription)).union(output.lagging) {
            let markers = items.indices.filter { items[$0] == .lagged(subscription: subscription) }
            let stale = staleMarkers[subscription] ?? 0
            guard output.lagging.contains(subscription) else {
                if markers.count != stale { fail("\(subscription) does not lag, but has a lag marker queued") }
                continue
            }
            let after: Int
            if markerTaken.contains(subscription) {
                if markers.count != stale { fail("\(subscription) has a second lag marker queued") }
                after = 0
            } else {
                guard markers.count == stale + 1 else {
                    fail("\(subscription) lags with \(markers.count - stale) markers queued")
                    continue
                }
                after = markers[stale]
            }
            if items[after...].contains(where: { $0.isEvent && $0.subscription == subscription }) {
                fail("\(subscription) lags with an event queued after its marker")
            }
        }

        // Pending bytes are the sum of the costs of what is queued and held.
        if output.pendingBytes != expectedPending {
            fail("\(output.pendingBytes) bytes pending, but what is queued and held costs \(expectedPending)")
        }
        if output.hasRoom != (expectedPending < bounds.maxPendingBytes) {
            fail("room: \(output.hasRoom) with \(expectedPending) of \(bounds.maxPendingBytes) bytes pending")
        }
        // A waiting reader is at the bound; a waiting writer has nothing to take.
        if output.readerIsWaiting != readerWaiting { fail("the value and the reader disagree on its waiting") }
        if readerWaiting && (output.hasRoom && !lagFreedRoom || output.isClosed) {
            fail("the reader waits though it may read")
        }
        if lagFreedRoom && items.isEmpty && held == nil {
            fail("the reader waits for a write that no queued output will make")
        }
        if output.writerIsWaiting != (writer == .waiting) { fail("the value and the writer disagree on its waiting") }
        if writer == .waiting && (!items.isEmpty || output.isClosed) { fail("the writer waits with output to take") }

        // Nothing is queued after the close.
        if let closedAt {
            if items.count > closedAt.queued { fail("the queue grew after the close") }
            if items.contains(where: { ($0.serial ?? 0) >= closedAt.serial }) { fail("queued after the close") }
        }

        // Stalled exactly when output is pending and has not moved for longer than the timeout.
        let stalled = output.isStalled(timeout: timeout, now: now)
        if stalled != model.isStalled(timeout: timeout, now: now) { fail("stalled: \(stalled) at \(now)") }
        if stalled { coverage.stalled += 1 }
        let pending = !items.isEmpty || held != nil || !output.lagging.isEmpty
        let deadline = model.lastMoved + timeout
        if output.isStalled(timeout: timeout, now: deadline) { fail("stalled at exactly the timeout") }
        if output.isStalled(timeout: timeout, now: deadline + .nanoseconds(1)) != pending {
            fail("stalled: \(!pending) just past the timeout, with output pending: \(pending)")
        }
    }

    /// The end of a schedule: the output closes and the writer drains it. Everything queued was taken once, in
    /// order, and what a lag dropped is followed by the subscription's marker, so no subscriber sees a gap.
    mutating func drain() {
        if closedAt == nil { play(.close) }
        if writer == .foundNothing { play(.writerWaits) }
        if writer == .waiting { fail("the writer still waits after the close") }
        if readerWaiting { fail("the reader still waits after the close") }
        var rounds = 0
        while writer != .finished && violation == nil && rounds < 3 {
            rounds += 1
            if held != nil { play(.wrote) }
            play(.take)
            check()
        }
        if held != nil { play(.wrote) }
        if writer != .finished { fail("the writer never finished") }
        if output.pendingBytes != 0 { fail("\(output.pendingBytes) bytes pending after the drain") }
        if output.isStalled(timeout: timeout, now: now + timeout * 2), output.lagging.isEmpty {
            fail("stalled with nothing pending")
        }

        let serials = taken.compactMap(\.serial)
        if serials != serials.sorted() || Set(serials).count != serials.count {
            fail("taken out of order or twice: \(serials)")
        }
        let takenSet = Set(taken)
        for (index, token) in accepted.enumerated() where !takenSet.contains(token) {
            guard case .event(let subscription, _, let serial, _) = token else {
                fail("\(token) was queued and never taken")
                continue
            }
            // The marker of the lag that dropped it comes after what preceded it, and before the next event of
            // its subscription that was taken.
            let start = taken.lastIndex { ($0.serial ?? .max) < serial }.map { $0 + 1 } ?? 0
            let next =
                taken[start...].firstIndex { $0.isEvent && $0.subscription == subscription } ?? taken.endIndex
            if !taken[start..<next].contains(.lagged(subscription: subscription)) {
                fail("\(token) (accepted #\(index)) was dropped with no lag marker after it")
            }
        }
        let catchUps = accepted.filter { if case .catchUp = $0 { true } else { false } }
        let catchUpsTaken = taken.filter { if case .catchUp = $0 { true } else { false } }
        if catchUps != catchUpsTaken { fail("catch-up markers lost: \(catchUps) queued, \(catchUpsTaken) taken") }
    }
}
