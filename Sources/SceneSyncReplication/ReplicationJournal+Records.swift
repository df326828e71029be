import NIOCore
import SceneSyncCore

/// What the journal holds once replayed, and the records of the push and the feed that it is given.
extension ReplicationJournal {
    /// A change of this host waiting to be pushed, in push order.
    ///
    /// Its content stays in memory only until its line is in the file: then only where the line is (``line``) is
    /// kept, and the content is read back when it is pushed (``contents(of:)``). A long outage thus costs memory per
    /// change, not per byte of content.
    struct Pending: Sendable, Equatable {
        var number: UInt64
        var scene: SceneID
        /// The content while it is only in memory; `nil` once its line is in the file, and for a deletion.
        var bytes: [UInt8]?
        var format: SceneFormat
        var origin: Origin
        var deleted: Bool
        /// The content's digest (0 for a deletion), for the push answer.
        var digest: UInt64
        /// Where its `local` line is in the file, once it is there.
        var line: Range<Int64>? = nil

        init(number: UInt64, scene: SceneID, bytes: [UInt8]?, format: SceneFormat, origin: Origin) {
            self.number = number
            self.scene = scene
            self.bytes = bytes
            self.format = format
            self.origin = origin
            deleted = bytes == nil
            digest = bytes.map(SceneStore.digest) ?? 0
        }
    }

    /// What the journal holds, replayed.
    struct State: Sendable {
        /// Names this journal's sequence of push numbers in the database: a lost state directory starts a new one.
        var stream: String
        var nextNumber: UInt64 = 1
        /// The kernel boot this file's appends were written in (see ``numbersSkippedAfterABoot``).
        var boot: String? = nil
        /// The highest database sequence whose change this host has applied (or skipped) in order.
        var cursor: Int64 = 0
        /// Per scene, the cluster version this host's state was last based on (applied, or pushed by it).
        var applied: [SceneID: Int64] = [:]
        /// Per scene, the digest of the content the database last held as far as this host knows: a local change
        /// that only repeats it (a remote change re-read from its file after a crash) is not pushed back.
        var digests: [SceneID: UInt64] = [:]
        /// Per scene, the database sequence of this host's latest committed change: an older database change to
        /// that scene is superseded by it and never applied.
        var ownSeqs: [SceneID: Int64] = [:]
        /// Per scene, the digest of what this host's scene held when the journal last saw it agree with the
        /// database: a push answered, a remote change applied or found there already. Not the database's digest
        /// (``digests``): a remote change this host refused moves that on, while this host keeps its own state. A
        /// start that finds the scene otherwise, with nothing pending, lost the line of a change
        /// (``ReplicationJournal/reconcile(holding:shares:)``).
        var held: [SceneID: UInt64] = [:]
        /// Per scene, the sequence of the latest database change received for it (`recv`). Beyond the cursor, the
        /// change may not be in the scene file yet: the feed applies it again after a restart.
        var received: [SceneID: Int64] = [:]
        /// In push order. Answers come in push order too, so each removes the oldest (``removePending(_:)``).
        var pending: CircularBuffer<Pending> = []
        var pendingCounts: [SceneID: Int] = [:]
        /// This host's committed sequences beyond the cursor, kept until the cursor reaches them. Not journaled:
        /// after a restart the feed reads them again and skips them as its own.
        var ownAhead: Set<Int64> = []

        /// Removes the pending change `number`: the oldest, in constant time, when the database answers in push
        /// order (draining a long outage's backlog stays linear).
        mutating func removePending(_ number: UInt64) -> Pending? {
            if pending.first?.number == number { return pending.removeFirst() }
            guard let index = pending.firstIndex(where: { $0.number == number }) else { return nil }
            return pending.remove(at: index)
        }
    }

    /// The database's answer to one push of a batch.
    struct PushAnswer: Sendable, Equatable {
        var number: UInt64
        var scene: SceneID
        /// The sequence it committed as; 0 when nothing was committed (the database already held that content, or
        /// the duplicate's log row was pruned).
        var seq: Int64
        /// The scene's cluster version after it; 0 when unknown.
        var version: Int64
        /// The digest of the pushed content (0 for a deletion).
        var digest: UInt64
    }

    /// A database change the feed received: its scene, and the digest of what the database holds for it now.
    struct Received: Sendable, Equatable {
        var seq: Int64
        var scene: SceneID
        var digest: UInt64
    }

    /// A database change the feed is done with.
    struct Done: Sendable, Equatable {
        var seq: Int64
        /// Set when this host's state now reflects the change: the scene is based on `version`.
        var scene: SceneID? = nil
        var version: Int64? = nil
        /// The digest of what the scene holds now (0 for a deletion), when `scene` is set: of this change, not of
        /// the latest one received, which the same batch may have refused.
        var digest: UInt64? = nil
    }
}

extension ReplicationJournal.State {
    /// Where the pending change `number` is, found by halving: pending changes are in number order.
    func pendingIndex(of number: UInt64) -> CircularBuffer<ReplicationJournal.Pending>.Index? {
        var low = 0
        var high = pending.count
        while low < high {
            let middle = low + (high - low) / 2
            if pending[pending.index(pending.startIndex, offsetBy: middle)].number < number {
                low = middle + 1
            } else {
                high = middle
            }
        }
        guard low < pending.count else { return nil }
        let index = pending.index(pending.startIndex, offsetBy: low)
        return pending[index].number == number ? index : nil
    }
}
