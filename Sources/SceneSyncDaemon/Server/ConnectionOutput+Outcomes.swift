import NIOCore

extension ConnectionOutput {
    /// What became of an item handed to ``ConnectionOutput/enqueue(line:at:)`` and its siblings. The shell acts on
    /// it: wakes the writer, counts what was dropped for `stats`.
    enum Enqueued: Equatable, Sendable {
        /// Queued. `wakeWriter`: the writer was waiting for items and must be resumed.
        case queued(wakeWriter: Bool)
        /// The subscription passed `subscriber_queue`: the `dropped` events it still had queued were removed, and one
        /// lag marker queued in their place (the new event is dropped too). `wakeWriter` as for `queued`.
        case lagStarted(dropped: Int, wakeWriter: Bool)
        /// The subscription lags already: the event is dropped, and its resync will bring the client in step.
        case droppedWhileLagging
        /// The output is closed: nothing is queued any more.
        case refused

        /// Whether the writer must be resumed.
        var wakesWriter: Bool {
            switch self {
            case .queued(let wake), .lagStarted(_, let wake): wake
            case .droppedWhileLagging, .refused: false
            }
        }

        /// How many events this input cost the client, for the `events_dropped` counter: the queued ones a lag
        /// removed and the one that did not fit, or the one that arrived while lagging.
        var droppedEvents: Int {
            switch self {
            case .lagStarted(let dropped, _): dropped + 1
            case .droppedWhileLagging: 1
            case .queued, .refused: 0
            }
        }
    }

    /// What the writer gets when it asks for output (``ConnectionOutput/takeAll()``).
    enum Take: Sendable {
        /// Everything that was queued, in order, for one write.
        case batch(CircularBuffer<Item>)
        /// Nothing is queued, but more may come: the writer waits (``ConnectionOutput/writerWaits()``).
        case nothingQueued
        /// Closed and nothing left: the writer is done.
        case finished
    }

    /// What the shell must do once the writer reported a batch written (``ConnectionOutput/wrote(at:)``).
    struct Written: Equatable, Sendable {
        /// The reader waited for room, and pending output is now below `max_pending_bytes`: resume it.
        var releaseReader: Bool
        /// When the oldest item of what was written was queued, for the delivery latency; nil for a flush.
        var queuedAt: LoopInstant?
    }

    /// What the shell must do once the output is closed (``ConnectionOutput/close()``).
    struct Closed: Equatable, Sendable {
        /// The writer waited for items: resume it, so that it drains what is queued and ends.
        var wakeWriter: Bool
        /// The reader waited for room: resume it, so that it sees the close and ends.
        var releaseReader: Bool
    }
}
