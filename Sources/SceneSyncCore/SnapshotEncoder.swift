/// A snapshot document written piece by piece: each call appends the next scene entries to a buffer, so that
/// the daemon can hand each piece to the disk while it encodes the next one, and a snapshot of a hundred
/// thousand scenes never sits in memory whole. The bytes are the same whatever the pieces' size: ``encode()``
/// is the document in one piece.
///
/// Encoding only: writing the pieces is the daemon's (SnapshotStore).
public struct SnapshotEncoder: Sendable {
    public let epoch: String
    public let revision: UInt64
    /// RFC 3339, UTC.
    public let time: String
    public let reason: Snapshot.Reason
    private let scenes: Scenes
    private var position = Position.header

    /// The scenes in ID order, held as they come: a snapshot's array, or a store's entries and the slots that
    /// order them, so that a store's snapshot copies no scene.
    enum Scenes: Sendable {
        case states([SceneState])
        case entries(ChunkedArray<SceneStore.Entry>, order: [Int32])
    }

    private enum Position {
        case header
        /// The index, in ID order, of the next scene to write.
        case scene(Int)
        case done
    }

    init(epoch: String, revision: UInt64, time: String, reason: Snapshot.Reason, scenes: Scenes) {
        self.epoch = epoch
        self.revision = revision
        self.time = time
        self.reason = reason
        self.scenes = scenes
    }

    /// How many scenes the document holds.
    public var sceneCount: Int {
        switch scenes {
        case .states(let states): states.count
        case .entries(_, let order): order.count
        }
    }

    /// Appends the document's next bytes to `out`: whole scene entries until `out` holds `limit` bytes or more
    /// (so a piece passes `limit` by less than one entry), at least one of them, and the document's end after
    /// the last. Returns whether bytes are left, that is whether to call it again; once it returns `false` the
    /// document is complete, and further calls append nothing.
    public mutating func encodeNext(into out: inout [UInt8], upTo limit: Int) -> Bool {
        var next: Int
        switch position {
        case .done: return false
        case .scene(let index): next = index
        case .header:
            appendHeader(to: &out)
            next = 0
        }
        switch scenes {
        case .states(let states):
            // By index: walking the array by value would copy every scene, retaining its buffers.
            states.withUnsafeBufferPointer { states in
                while next < states.count {
                    Snapshot.appendEntry(states[next], first: next == 0, to: &out)
                    next += 1
                    if out.count >= limit { break }
                }
            }
        case .entries(let values, let order):
            while next < order.count {
                Snapshot.appendEntry(values[Int(order[next])].state, first: next == 0, to: &out)
                next += 1
                if out.count >= limit { break }
            }
        }
        guard next == sceneCount else {
            position = .scene(next)
            return true
        }
        out.append(literal: "\n]}\n")
        position = .done
        return false
    }

    private func appendHeader(to out: inout [UInt8]) {
        out.append(literal: #"{"format":""#)
        out.append(contentsOf: Snapshot.formatTag.utf8)
        out.append(literal: #"","epoch":"#)
        JSONWriter.appendString(epoch, to: &out)
        out.append(literal: #","revision":"#)
        JSONWriter.appendUInt(revision, to: &out)
        out.append(literal: #","time":"#)
        JSONWriter.appendString(time, to: &out)
        out.append(literal: #","reason":""#)
        out.append(contentsOf: reason.rawValue.utf8)
        out.append(literal: "\",\"scenes\":[")
    }
}

extension Snapshot {
    /// One scene per line, so that a snapshot of many scenes stays readable and diffable. Each scene's file bytes
    /// are appended straight from its stored bytes (its kept layout, or its element records), with no array of
    /// elements and no buffer per scene.
    static func appendEntry(_ scene: SceneState, first: Bool, to out: inout [UInt8]) {
        out.append(contentsOf: (first ? "\n" : ",\n").utf8)
        out.append(UInt8(ascii: "{"))
        Wire.appendSceneHeaderMembers(scene, to: &out)
        // Before `content`, which must stay last (see `decodeScene`).
        Wire.appendPhaseMember(scene, to: &out)
        out.append(literal: #","content":"#)
        scene.appendFileBytes(to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// The encoder of this snapshot's document.
    public func encoder() -> SnapshotEncoder {
        // A decoded snapshot's scenes, and a store's `scenes`, are sorted already: checking costs less than sorting
        // again. By index: walking the array by value would copy every scene, retaining its buffers, twice.
        let inOrder = scenes.indices.dropFirst().allSatisfy { scenes[$0 - 1].id < scenes[$0].id }
        return SnapshotEncoder(
            epoch: epoch, revision: revision, time: time, reason: reason,
            scenes: .states(inOrder ? scenes : scenes.sorted(by: { $0.id < $1.id })))
    }

    /// The whole document, in one piece (see ``SnapshotEncoder``).
    public func encode() -> [UInt8] {
        var encoder = encoder()
        var out: [UInt8] = []
        while encoder.encodeNext(into: &out, upTo: .max) {}
        return out
    }
}
