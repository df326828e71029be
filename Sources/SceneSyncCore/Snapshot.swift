/// The snapshot document of §5: every scene, as its file holds it, at one revision.
public struct Snapshot: Sendable, Equatable {
    public static let formatTag = "scenesync.snapshot/1"
    /// Scene content sits three levels deep in a snapshot, and may itself nest as deep as the contract allows.
    static let snapshotNesting = JSONParser.defaultMaxNesting + 4

    public enum Reason: String, Sendable, CaseIterable {
        case signal
        case phase
        case request
        case shutdown
    }

    public var epoch: String
    public var revision: UInt64
    /// RFC 3339, UTC.
    public var time: String
    public var reason: Reason
    /// Sorted by ID when encoded (see ``encoder()``).
    public var scenes: [SceneState]

    public init(epoch: String, revision: UInt64, time: String, reason: Reason, scenes: [SceneState]) {
        self.epoch = epoch
        self.revision = revision
        self.time = time
        self.reason = reason
        self.scenes = scenes
    }

    /// The file name of a snapshot at `revision`: 20 digits so that names sort like revisions.
    public static func fileName(revision: UInt64) -> String {
        let digits = String(revision)
        return "snapshot-" + String(repeating: "0", count: 20 - digits.count) + digits + ".json"
    }

    /// The revision a snapshot file name stands for, or `nil` for any other name.
    public static func revision(fromFileName name: String) -> UInt64? {
        guard name.hasPrefix("snapshot-"), name.hasSuffix(".json"), name.utf8.count == 9 + 20 + 5 else { return nil }
        let digits = name.dropFirst(9).dropLast(5)
        guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return UInt64(digits)
    }

    /// Decodes a snapshot file, refusing a torn or foreign one with a reason. Each scene's `content` is kept byte for
    /// byte, so a restored scene file is exactly what the app wrote.
    ///
    /// The scenes are decoded in runs (see ``SceneRun``): `mapChunks(count, body)` must return `body(i)` for each run
    /// index `i` below `count`, in index order, having called it in any order and on any threads. Decoding a hundred
    /// thousand scenes is most of a restart, and the daemon runs the runs on every core; this module starts no thread
    /// and takes no lock. The error is the first in the document, whatever order the runs ran in.
    ///
    /// The document is walked once: the scenes array is not first skipped to find where it ends, nor again to find
    /// where each scene ends. Each was a pass over every byte on one thread before the runs could start.
    public static func decode(
        _ bytes: [UInt8],
        mapChunks: (_ count: Int, _ body: @Sendable (Int) -> Result<SceneRun, SnapshotError>) -> [Result<
            SceneRun, SnapshotError
        >] = { count, body in (0..<count).map(body) }
    ) throws(SnapshotError) -> Snapshot {
        try decode(bytes, runBytes: defaultRunBytes, mapChunks: mapChunks)
    }

    /// ``decode(_:mapChunks:)`` with runs of about `runBytes` bytes, which tests make small.
    static func decode(
        _ bytes: [UInt8], runBytes: Int,
        mapChunks: (_ count: Int, _ body: @Sendable (Int) -> Result<SceneRun, SnapshotError>) -> [Result<
            SceneRun, SnapshotError
        >] = { count, body in (0..<count).map(body) }
    ) throws(SnapshotError) -> Snapshot {
        let members: [String: Range<Int>]
        let scenes: Result<[SceneState], SnapshotError>?
        do throws(JSONError) {
            (members, scenes) = try documentMembers(bytes, runBytes: runBytes, mapChunks: mapChunks)
        } catch {
            throw .unreadable("\(error)")
        }
        func value(_ key: String) throws(SnapshotError) -> JSONValue {
            guard let span = members[key] else { throw .unreadable("missing \(key)") }
            do throws(JSONError) {
                return try JSONParser.parse(bytes, in: span, maxNesting: snapshotNesting - 1)
            } catch {
                throw .unreadable("\(key): \(error)")
            }
        }
        guard try value("format").stringValue == formatTag else { throw .foreign }
        guard let epoch = try value("epoch").stringValue, let revision = try value("revision").uint64Value,
            let time = try value("time").stringValue,
            let reason = try value("reason").stringValue.flatMap(Reason.init), let scenes
        else { throw .unreadable("missing or malformed header fields") }
        return Snapshot(epoch: epoch, revision: revision, time: time, reason: reason, scenes: try scenes.get())
    }

    /// The name of the one member whose value is decoded where the document is walked.
    private static let scenesMember = JSONParser.MemberNames(["scenes"])

    /// Walks the document's object: the span of each member's value, every value checked, and the scenes decoded
    /// (`nil` when there is no `scenes` array). A scene that does not decode is the scenes' error, thrown only once
    /// the header was read: a foreign document stays foreign, whatever its scenes hold.
    private static func documentMembers(
        _ bytes: [UInt8], runBytes: Int,
        mapChunks: (_ count: Int, _ body: @Sendable (Int) -> Result<SceneRun, SnapshotError>) -> [Result<
            SceneRun, SnapshotError
        >]
    ) throws(JSONError) -> (members: [String: Range<Int>], scenes: Result<[SceneState], SnapshotError>?) {
        var members: [String: Range<Int>] = [:]
        var scenes: Result<[SceneState], SnapshotError>?
        var parser = JSONParser(bytes, maxNesting: snapshotNesting)
        parser.skipWhitespace()
        parser.index = try JSONParser.forEachMember(
            of: &parser, validated: false,
            reads: { (key, keyIsEscaped, parser) throws(JSONError) -> Bool in
                guard scenesMember.slot(bytes, key, isEscaped: keyIsEscaped) == 0 else { return false }
                // A repeated key keeps its last value: scenes that are no array leave none, whatever came before.
                scenes = nil
                guard parser.peek() == UInt8(ascii: "[") else { return false }
                switch decodeScenes(bytes, arrayAt: parser.index, runBytes: runBytes, mapChunks: mapChunks) {
                case .success(let run):
                    scenes = .success(run.scenes)
                    parser.index = run.next
                case .failure(let error):
                    scenes = .failure(error)
                    // Only to find where the array ends, so that the rest of the document is still read.
                    try parser.skipValue(depth: 1, validated: true)
                }
                return true
            }
        ) { member in
            members[JSONParser.key(bytes, member.key, isEscaped: member.keyIsEscaped)] = member.value
        }
        try parser.expectEnd()
        return (members, scenes)
    }

    /// The members of a scene entry that a restore reads, in the order `decodeScene` reads them.
    private static let sceneMembers = JSONParser.MemberNames([
        "scene", "version", "created", "modified", "format", "content", "phase",
    ])
    /// Where `content` is among ``sceneMembers``.
    private static let contentMember = 5

    /// The scene entry whose `{` is at `start`, and where it ends.
    static func decodeScene(_ bytes: [UInt8], at start: Int) throws(SnapshotError) -> (scene: SceneState, end: Int) {
        let members: [Range<Int>?]
        let end: Int
        do throws(JSONError) {
            // `content` is checked where it is decoded below, byte by byte, as any scene file is.
            (members, end) = try JSONParser.memberSpans(
                of: bytes, objectAt: start, named: sceneMembers, checkedByCaller: contentMember)
        } catch {
            throw .unreadable("scene entry: \(error)")
        }
        guard let name = string(bytes, members[0]), let id = SceneID(name),
            let version = number(bytes, members[1]), let created = number(bytes, members[2]),
            let modified = number(bytes, members[3]),
            let format = string(bytes, members[4]).flatMap(SceneFormat.init),
            let contentSpan = members[5]
        else { throw .unreadable("malformed scene entry") }
        // The recorded format is authoritative (an empty scene keeps its format), and limits are not applied:
        // a scene accepted once is never lost to a later, smaller limit.
        let codec = SceneFileCodec(policy: format == .codable ? .codable : .array, maxFileBytes: .max, maxDepth: .max)
        // `encode` puts the file's bytes right after `"content":` and right before `}`, so whitespace around the
        // value is the file's own (a final newline, say): without it a restored file would not be the app's bytes.
        let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var lower = contentSpan.lowerBound
        var upper = contentSpan.upperBound
        while lower > start, isWhitespace(bytes[lower - 1]) { lower -= 1 }
        while upper < end, isWhitespace(bytes[upper]) { upper += 1 }
        do throws(SceneFileError) {
            let decoded = try codec.decode(Array(bytes[lower..<upper]))
            // A phase this version does not know (a newer daemon's snapshot) is dropped, not the snapshot: losing
            // it only costs the next launch a hint, while refusing the snapshot would cost a new epoch.
            let phase = string(bytes, members[6]).flatMap(ScenePhase.init)
            let scene = SceneState(
                id: id, version: version, created: created, modified: modified, format: format,
                elements: decoded.elements, layout: decoded.layout, phase: phase)
            return (scene, end)
        } catch {
            throw .unreadable("scene \(name): \(error)")
        }
    }
}

extension Snapshot {
    /// An unsigned integer member, read straight from its digits: a restart reads three per scene, and parsing each
    /// into a ``JSONValue`` (a copy of its bytes, a tree) was a large part of decoding a big snapshot.
    fileprivate static func number(_ bytes: [UInt8], _ span: Range<Int>?) -> UInt64? {
        guard let span else { return nil }
        return JSONParser.digitsValue(bytes, span) ?? parsed(bytes, span)?.uint64Value
    }

    /// A string member; one without escapes (every scene ID and format) is taken as it stands.
    fileprivate static func string(_ bytes: [UInt8], _ span: Range<Int>?) -> String? {
        guard let span else { return nil }
        if let text = JSONParser.unescapedText(bytes, span) { return UTF8Text.string(text) }
        return parsed(bytes, span)?.stringValue
    }

    private static func parsed(_ bytes: [UInt8], _ span: Range<Int>) -> JSONValue? {
        // Checked while skipped: only a value nested too deep fails, which is no string or number either, so the
        // caller's "malformed scene entry" is the right answer.
        try? JSONParser.parse(Array(bytes[span]))
    }
}

/// Why a snapshot file cannot be used. Restore then falls back to an older snapshot, and a new epoch.
public enum SnapshotError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Torn, truncated or otherwise not a complete snapshot document.
    case unreadable(String)
    /// Valid JSON, but not a `scenesync.snapshot/1` document.
    case foreign

    public var description: String {
        switch self {
        case .unreadable(let reason): "unreadable snapshot: \(reason)"
        case .foreign: "not a \(Snapshot.formatTag) document"
        }
    }
}
