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
    /// The scenes are decoded in chunks: `mapChunks(count, body)` must return `body(i)` for each chunk index `i`
    /// below `count`, in index order, having called it in any order and on any threads. Decoding a hundred thousand
    /// scenes is most of a restart, and the daemon runs the chunks on every core; this module starts no thread and
    /// takes no lock. The error is the first in the document, whatever order the chunks ran in.
    public static func decode(
        _ bytes: [UInt8],
        mapChunks: (_ count: Int, _ body: @Sendable (Int) -> Result<[SceneState], SnapshotError>) -> [Result<
            [SceneState], SnapshotError
        >] = { count, body in (0..<count).map(body) }
    ) throws(SnapshotError) -> Snapshot {
        let members: [String: Range<Int>]
        do throws(JSONError) {
            // The document's own syntax only: the header's members are checked where they are parsed below, and
            // each scene where it is decoded, in chunks on every core. Checking it all here first was a pass over
            // every byte on one thread before the chunks could start.
            members = try JSONParser.objectMemberSpans(of: bytes, maxNesting: snapshotNesting, checkingValues: false)
        } catch {
            throw .unreadable("\(error)")
        }
        // Every member but the scenes is checked here, as the whole document once was: a damaged member that this
        // version does not read still makes the snapshot unreadable.
        for (key, span) in members where key != "scenes" {
            do throws(JSONError) {
                try JSONParser.validate(bytes[span], maxNesting: snapshotNesting - 1)
            } catch {
                throw .unreadable("\(key): \(error)")
            }
        }
        func value(_ key: String) throws(SnapshotError) -> JSONValue {
            guard let span = members[key] else { throw .unreadable("missing \(key)") }
            do throws(JSONError) {
                return try JSONParser.parse(Array(bytes[span]))
            } catch {
                throw .unreadable("\(key): \(error)")
            }
        }
        guard try value("format").stringValue == formatTag else { throw .foreign }
        guard let epoch = try value("epoch").stringValue, let revision = try value("revision").uint64Value,
            let time = try value("time").stringValue,
            let reason = try value("reason").stringValue.flatMap(Reason.init), let scenesSpan = members["scenes"]
        else { throw .unreadable("missing or malformed header fields") }

        let sceneSpans: [Range<Int>]
        do throws(JSONError) {
            // Each scene's end only: each is checked as a whole where it is decoded.
            sceneSpans = try JSONParser.elementSpans(of: bytes, in: scenesSpan, validated: true)
        } catch {
            throw .unreadable("scenes: \(error)")
        }
        let chunkSize = 2048
        let chunks = (sceneSpans.count + chunkSize - 1) / chunkSize
        let decoded = mapChunks(chunks) { chunk -> Result<[SceneState], SnapshotError> in
            var scenes: [SceneState] = []
            scenes.reserveCapacity(chunkSize)
            let lower = chunk * chunkSize
            do throws(SnapshotError) {
                for span in sceneSpans[lower..<min(sceneSpans.count, lower + chunkSize)] {
                    scenes.append(try decodeScene(bytes, span))
                }
                return .success(scenes)
            } catch {
                return .failure(error)
            }
        }
        guard decoded.count == chunks else {
            preconditionFailure("mapChunks returned \(decoded.count) results for \(chunks) chunks")
        }
        var scenes: [SceneState] = []
        scenes.reserveCapacity(sceneSpans.count)
        for result in decoded { scenes.append(contentsOf: try result.get()) }
        return Snapshot(epoch: epoch, revision: revision, time: time, reason: reason, scenes: scenes)
    }

    /// The members of a scene entry that a restore reads, in the order `decodeScene` reads them.
    private static let sceneMembers = JSONParser.MemberNames([
        "scene", "version", "created", "modified", "format", "content", "phase",
    ])
    /// Where `content` is among ``sceneMembers``.
    private static let contentMember = 5

    private static func decodeScene(_ bytes: [UInt8], _ span: Range<Int>) throws(SnapshotError) -> SceneState {
        let members: [Range<Int>?]
        do throws(JSONError) {
            // `content` is checked where it is decoded below, byte by byte, as any scene file is.
            members = try JSONParser.memberSpans(
                of: bytes, wholeObject: span, named: sceneMembers, checkedByCaller: contentMember)
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
        while lower > span.lowerBound, isWhitespace(bytes[lower - 1]) { lower -= 1 }
        while upper < span.upperBound, isWhitespace(bytes[upper]) { upper += 1 }
        do throws(SceneFileError) {
            let decoded = try codec.decode(Array(bytes[lower..<upper]))
            // A phase this version does not know (a newer daemon's snapshot) is dropped, not the snapshot: losing
            // it only costs the next launch a hint, while refusing the snapshot would cost a new epoch.
            let phase = string(bytes, members[6]).flatMap(ScenePhase.init)
            return SceneState(
                id: id, version: version, created: created, modified: modified, format: format,
                elements: decoded.elements, layout: decoded.layout, phase: phase)
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
