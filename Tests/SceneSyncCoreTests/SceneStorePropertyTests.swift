import SceneSyncTestKit
import Testing

@testable import SceneSyncCore

/// The reference model: a dictionary of paths with the contract's bookkeeping, written from §3–§4 directly.
struct ReferenceModel {
    struct Scene {
        var version: UInt64
        var created: UInt64
        var modified: UInt64
        var format: SceneFormat
        var path: [Element]
        /// What the file holds: the last file read, or what the daemon wrote.
        var fileBytes: [UInt8]
        var origin: Origin
    }

    var epoch: String
    var revision: UInt64
    var scenes: [SceneID: Scene] = [:]
    /// Every accepted change since the last restart, in order.
    var log: [ChangeRecord] = []
    /// The revision history started at.
    var start: UInt64
    let codec: SceneFileCodec

    init(epoch: String, revision: UInt64, codec: SceneFileCodec) {
        self.epoch = epoch
        self.revision = revision
        self.start = revision
        self.codec = codec
    }

    enum Outcome: Equatable {
        case error(ErrorCode)
        case noOp
        case record(ChangeRecord)
        case unchanged
        case rejected
    }

    mutating func accept(_ id: SceneID, _ scene: Scene?, kind: ChangeRecord.Kind, conflict: Conflict?) -> Outcome {
        revision += 1
        let record: ChangeRecord
        if let scene {
            var scene = scene
            scene.modified = revision
            if scene.version == 1 { scene.created = revision }
            scenes[id] = scene
            record = ChangeRecord(
                clock: Clock(epoch: epoch, revision: revision), scene: id, kind: .set, version: scene.version,
                format: scene.format, path: scene.path, origin: scene.origin, conflict: conflict)
        } else {
            let old = scenes.removeValue(forKey: id)
            record = ChangeRecord(
                clock: Clock(epoch: epoch, revision: revision), scene: id, kind: kind, version: (old?.version ?? 0) + 1,
                format: old?.format ?? .array, path: nil, origin: .file, conflict: conflict)
        }
        log.append(record)
        return .record(record)
    }

    mutating func client(
        _ operation: SceneStore.Operation, on id: SceneID, ifVersion: UInt64?, origin: Origin, overwriting: Bool
    ) -> Outcome {
        let current = scenes[id]
        if let ifVersion, ifVersion != (current?.version ?? 0) { return .error(.conflict) }
        let conflict = overwriting ? current.map { Conflict(path: $0.path, origin: $0.origin) } : nil
        let newPath: [Element]
        let format: SceneFormat
        switch operation {
        case .delete:
            guard current != nil else { return .error(.notFound) }
            revision += 1
            let old = scenes.removeValue(forKey: id)
            let record = ChangeRecord(
                clock: Clock(epoch: epoch, revision: revision), scene: id, kind: .delete,
                version: (old?.version ?? 0) + 1,
                format: old?.format ?? .array, path: nil, origin: origin, conflict: conflict)
            log.append(record)
            return .record(record)
        case .set(let path, let requested):
            let typed = path.filter { $0.tag != nil }.count
            if typed != 0 && typed != path.count { return .error(.badRequest) }
            let kind: SceneFormat? = path.isEmpty ? nil : (typed == path.count ? .codable : .array)
            if let requested, let kind, requested != kind { return .error(.badRequest) }
            format = requested ?? kind ?? current?.format ?? codec.policy.pinned ?? .array
            // §3: an element equal to the current one at its position keeps the current one's bytes.
            let existing = current?.path ?? []
            newPath = path.indices.map { index in
                index < existing.count && existing[index] == path[index] ? existing[index] : path[index]
            }
        case .push(let elements):
            if elements.isEmpty { return .error(.badRequest) }
            let typed = elements.filter { $0.tag != nil }.count
            if typed != 0 && typed != elements.count { return .error(.badRequest) }
            let kind: SceneFormat = typed == 0 ? .array : .codable
            let base = current?.path ?? []
            if !base.isEmpty, let existing = current?.format, existing != kind { return .error(.badRequest) }
            format = kind
            newPath = base + elements
        case .pop(let count):
            guard let current else { return .error(.notFound) }
            if count < 0 { return .error(.badRequest) }
            if count > current.path.count { return .error(.outOfRange) }
            format = current.format
            newPath = Array(current.path.dropLast(count))
        case .popToRoot:
            guard let current else { return .error(.notFound) }
            format = current.format
            newPath = []
        }
        if let pinned = codec.policy.pinned, !newPath.isEmpty, format != pinned { return .error(.badRequest) }
        if let current, current.path == newPath, current.format == format || newPath.isEmpty { return .noOp }
        if newPath.count > codec.maxDepth { return .error(.tooLarge) }
        let bytes = SceneFileCodec.encode(newPath, as: format)
        if bytes.count > codec.maxFileBytes { return .error(.tooLarge) }
        let scene = Scene(
            version: (current?.version ?? 0) + 1, created: current?.created ?? 0, modified: 0, format: format,
            path: newPath, fileBytes: bytes, origin: origin)
        return accept(id, scene, kind: .set, conflict: conflict)
    }

    /// A file whose decoded content the generator knows (`path`, `format`), or garbage (`path == nil`).
    mutating func file(_ id: SceneID, bytes: [UInt8]?, path: [Element]?, format: SceneFormat?) -> Outcome {
        guard let bytes else {
            guard scenes[id] != nil else { return .unchanged }
            return accept(id, nil, kind: .delete, conflict: nil)
        }
        if var current = scenes[id], current.fileBytes == bytes {
            current.fileBytes = bytes
            scenes[id] = current
            return .unchanged
        }
        guard let path, bytes.count <= codec.maxFileBytes, path.count <= codec.maxDepth else { return .rejected }
        if let pinned = codec.policy.pinned, let format, format != pinned { return .rejected }
        if var current = scenes[id] {
            let newFormat = format ?? current.format
            if current.path == path, current.format == newFormat {
                current.path = path
                current.fileBytes = bytes
                scenes[id] = current
                return .unchanged
            }
            let scene = Scene(
                version: current.version + 1, created: current.created, modified: 0, format: newFormat, path: path,
                fileBytes: bytes, origin: .file)
            return accept(id, scene, kind: .set, conflict: nil)
        }
        let scene = Scene(
            version: 1, created: 0, modified: 0, format: format ?? codec.policy.pinned ?? .array, path: path,
            fileBytes: bytes, origin: .file)
        return accept(id, scene, kind: .set, conflict: nil)
    }
}

/// Random paths, files and operations.
struct Generator {
    var rng: SplitMix64

    static let tags = [
        "MyApp.Recipe", "Swift.Int", "Swift.Array<Swift.Int>", "_Private.T", "NavigationBackportApp.EmojiVisualisation",
        "Swift.String",
    ]

    /// A JSON value text; a few spellings of the same numbers and objects so that no-ops happen.
    mutating func value() -> String {
        switch rng.below(9) {
        case 0: return rng.pick(["1", "1.0", "1e0", "10e-1"])
        case 1: return "\(rng.below(50))"
        case 2:
            return rng.pick([
                #"{"id":1,"title":"Recipe 1"}"#, #"{"title":"Recipe 1","id":1}"#,
                #"{ "id" : 1.0, "title" : "Recipe 1" }"#,
            ])
        case 3: return #"{"id":\#(rng.below(20)),"title":"Recipe \#(rng.below(5))"}"#
        case 4: return "\"note \(rng.below(10))\""
        case 5: return rng.pick([#""a/b""#, #""a\/b""#, #""caf\u00e9""#, "\"café 🎈\""])
        case 6: return "[\(rng.below(3)),\(rng.below(3))]"
        case 7: return rng.pick(["true", "null", "{}", "[]", #"{"applePie":{}}"#])
        default: return rng.chance(5) ? "\"" + String(repeating: "x", count: 1_500) + "\"" : "\(rng.below(5))"
        }
    }

    mutating func element(typed: Bool) -> Element {
        raw(typed ? rng.pick(Self.tags) : nil, value())
    }

    /// Mostly homogeneous paths; sometimes mixed ones, which clients must not send.
    mutating func elements(_ count: Int) -> [Element] {
        let typed = rng.chance(50)
        let mixed = rng.chance(5)
        return (0..<count).map { _ in element(typed: mixed ? rng.chance(50) : typed) }
    }

    mutating func operation() -> SceneStore.Operation {
        switch rng.below(10) {
        case 0, 1, 2:
            let format: SceneFormat? = rng.chance(20) ? rng.pick(SceneFormat.allCases) : nil
            return .set(path: elements(rng.below(5)), format: format)
        case 3, 4, 5: return .push(elements(rng.below(4)))
        case 6, 7: return .pop(count: rng.below(4) - 1 + (rng.chance(10) ? 3 : 0))
        case 8: return .popToRoot
        default: return .delete
        }
    }

    /// A file holding `path` in `format`, compact or spaced, with `\/` escapes in codable literals sometimes; with
    /// the path as the file holds it (elements keep the literal they were read with).
    mutating func file(_ path: [Element], _ format: SceneFormat) -> (bytes: [UInt8], path: [Element]) {
        let style = rng.below(3)
        if style == 0 { return (SceneFileCodec.encode(path, as: format), path) }
        var entries: [[UInt8]] = []
        var held = path
        switch format {
        case .array:
            entries = path.map(\.item)
        case .codable:
            for (index, element) in path.enumerated().reversed() {
                var tag: [UInt8] = []
                JSONWriter.appendString(element.tag ?? "", to: &tag)
                entries.append(tag)
                var body: [UInt8] = []
                JSONWriter.appendEscaped(element.item, to: &body)
                if style == 2, body.contains(UInt8(ascii: "/")) {
                    body = Array(text(body).replacing("/", with: #"\/"#).utf8)
                    held[index] = Element(tag: element.tag, item: element.item, itemLiteral: body)
                } else {
                    held[index] = Element(tag: element.tag, item: element.item)
                }
                entries.append([UInt8(ascii: "\"")] + body + [UInt8(ascii: "\"")])
            }
        }
        let separator = style == 1 ? utf8(",\n  ") : utf8(" , ")
        var out = utf8(style == 1 ? "[\n  " : "[ ")
        for (offset, entry) in entries.enumerated() {
            if offset > 0 { out += separator }
            out += entry
        }
        out += utf8(style == 1 ? "\n]" : " ]")
        return (out, held)
    }

    static let garbage: [[UInt8]] = [
        [], utf8("{"), utf8("[1,"), utf8(#"{"a":1}"#), utf8("[1]x"), utf8(nestedArrays(257)), utf8("\"x\""), utf8("42"),
        [0x5B, 0x22, 0xFF, 0x22, 0x5D], utf8("[\"a\u{01}\"]"),
    ]
}

@Suite("SceneStore against a reference model")
struct SceneStorePropertyTests {
    static let clientA = Origin(source: .client, client: "a", uid: 1, pid: 10)
    static let clientB = Origin(source: .client, client: "b", uid: 2, pid: 20)

    /// Mismatches of one step; the run stops at the first step that has any, so a failing seed reports once.
    struct Problems {
        var list: [String] = []
        mutating func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { list.append(message()) }
        }
    }

    @Test("random operations agree with the model", arguments: 0..<200)
    func randomOperations(_ seed: Int) throws {
        let ids = try ["main", "second", "w.1", "w-2"].map { try sceneID($0) }
        let policy: FormatPolicy = seed % 5 == 3 ? .codable : seed % 5 == 4 ? .array : .auto
        let codec = SceneFileCodec(policy: policy, maxFileBytes: 2_000, maxDepth: 12)
        let historyLimit = [0, 1, 7, 50, 10_000][seed % 5]
        var store = SceneStore(epoch: "e0", revision: UInt64(seed), codec: codec, historyLimit: historyLimit)
        var model = ReferenceModel(epoch: "e0", revision: UInt64(seed), codec: codec)
        var gen = Generator(rng: SplitMix64(seed: UInt64(seed)))
        var restarts = 0
        var counts: [String: Int] = [:]
        var failed = false

        for step in 0..<200 {
            let id = gen.rng.pick(ids)
            var problems = Problems()
            var action = ""
            switch gen.rng.below(20) {
            case 0..<11:
                // A client change, sometimes compare-and-set, sometimes over an unread file change.
                let operation = gen.operation()
                let currentVersion = model.scenes[id]?.version ?? 0
                let ifVersion: UInt64? =
                    gen.rng.chance(25)
                    ? gen.rng.pick([currentVersion, currentVersion + 1, 0, currentVersion &- 1]) : nil
                let origin = gen.rng.pick([Self.clientA, Self.clientB])
                let overwriting = gen.rng.chance(10)
                action = "\(operation) if_version \(String(describing: ifVersion)) overwriting \(overwriting)"
                let expected = model.client(
                    operation, on: id, ifVersion: ifVersion, origin: origin, overwriting: overwriting)
                let actual: ReferenceModel.Outcome
                var written: [UInt8]? = nil
                do {
                    let plan = try store.plan(
                        operation, on: id, ifVersion: ifVersion, origin: origin, overwritingUnreadFile: overwriting)
                    written = plan.fileBytes
                    let committed = store.commit(plan)
                    if plan.isNoOp {
                        problems.check(plan.fileBytes == nil && committed == nil, "a no-op wrote or committed")
                        actual = .noOp
                    } else if let committed {
                        actual = .record(committed)
                    } else {
                        problems.check(false, "commit of a change returned nil")
                        actual = .noOp
                    }
                } catch {
                    actual = .error(error.code)
                    if error.code == .conflict {
                        problems.check(error.current == store.scene(id), "conflict without the current scene")
                    }
                }
                problems.check(actual == expected, "outcome \(actual), model \(expected)")
                counts["\(expected)".prefix(while: { $0 != "(" }).description, default: 0] += 1
                // Half the time the daemon's own write comes back through the watcher: never a change.
                if let written, gen.rng.chance(50) {
                    let outcome = store.applyFile(id, bytes: written)
                    let modelOutcome = model.file(id, bytes: written, path: nil, format: nil)
                    problems.check(outcome == .unchanged, "own write read back: \(outcome)")
                    problems.check(modelOutcome == .unchanged, "own write read back, model: \(modelOutcome)")
                }
            case 11..<17:
                // An app writes the file.
                var file: (bytes: [UInt8], path: [Element])
                var path: [Element]? = nil
                var format: SceneFormat? = nil
                if gen.rng.chance(15) {
                    file = (gen.rng.pick(Generator.garbage), [])
                } else if gen.rng.chance(15), let current = model.scenes[id] {
                    // The same path again, maybe spaced or escaped differently.
                    file = gen.file(current.path, current.format)
                    path = file.path
                    format = current.path.isEmpty ? nil : current.format
                } else {
                    let typed = policy == .codable || (policy == .auto && gen.rng.chance(60))
                    let count = gen.rng.below(gen.rng.chance(5) ? 15 : 5)
                    let pathFormat: SceneFormat = typed ? .codable : .array
                    file = gen.file((0..<count).map { _ in gen.element(typed: typed) }, pathFormat)
                    path = file.path
                    format = count == 0 ? nil : pathFormat
                }
                action = "file \(text(file.bytes))"
                let expected = model.file(id, bytes: file.bytes, path: path, format: format)
                let outcome = store.applyFile(id, bytes: file.bytes)
                counts["file \(expected)".prefix(while: { $0 != "(" }).description, default: 0] += 1
                switch outcome {
                case .changed(let record): problems.check(expected == .record(record), "\(outcome), model \(expected)")
                case .unchanged: problems.check(expected == .unchanged, "unchanged, model \(expected)")
                case .rejected(let error):
                    problems.check(expected == .rejected, "rejected (\(error)), model \(expected)")
                }
            case 17, 18:
                // The app deletes the file.
                action = "file deleted"
                let expected = model.file(id, bytes: nil, path: nil, format: nil)
                let outcome = store.applyFile(id, bytes: nil)
                switch outcome {
                case .changed(let record): problems.check(expected == .record(record), "\(outcome), model \(expected)")
                default:
                    problems.check(expected == .unchanged && outcome == .unchanged, "\(outcome), model \(expected)")
                }
            default:
                guard gen.rng.chance(20) else { continue }
                // A restart from a snapshot: a new epoch, the same scenes, history from scratch.
                action = "restart"
                restarts += 1
                let snapshot = Snapshot(
                    epoch: store.epoch, revision: store.revision, time: "t", reason: .shutdown, scenes: store.scenes)
                let restored = try Snapshot.decode(snapshot.encode())
                let epoch = "e\(restarts)"
                store = SceneStore(epoch: epoch, revision: restored.revision, codec: codec, historyLimit: historyLimit)
                for scene in restored.scenes { store.restore(scene) }
                model.epoch = epoch
                model.start = model.revision
                model.log = []
                // Snapshots do not keep who made a state.
                for id in model.scenes.keys { model.scenes[id]?.origin = .file }
            }
            try Self.check(store, against: model, ids: ids, historyLimit: historyLimit, &problems)
            if !problems.list.isEmpty {
                let details = problems.list.joined(separator: "\n  ")
                Issue.record(Comment(rawValue: "seed \(seed) step \(step) scene \(id): \(action)\n  \(details)"))
                failed = true
                break
            }
        }
        // The run exercised the interesting outcomes, not only errors.
        guard !failed else { return }
        #expect(counts["record", default: 0] > 10, "\(counts)")
        #expect(counts["file record", default: 0] > 5, "\(counts)")
    }

    static func check(
        _ store: SceneStore, against model: ReferenceModel, ids: [SceneID], historyLimit: Int,
        _ problems: inout Problems
    ) throws {
        problems.check(store.revision == model.revision, "revision \(store.revision), model \(model.revision)")
        problems.check(store.count == model.scenes.count, "\(store.count) scenes, model \(model.scenes.count)")
        for id in ids {
            let expected = model.scenes[id]
            let actual = store.scene(id)
            problems.check(
                (actual == nil) == (expected == nil), "\(id): exists \(actual != nil), model \(expected != nil)")
            guard let expected, let actual else { continue }
            problems.check(
                actual.version == expected.version && actual.created == expected.created
                    && actual.modified == expected.modified,
                "\(id): version/created/modified \(actual.version)/\(actual.created)/\(actual.modified), model "
                    + "\(expected.version)/\(expected.created)/\(expected.modified)")
            problems.check(actual.created <= actual.modified, "\(id): created after modified")
            problems.check(actual.format == expected.format, "\(id): format \(actual.format), model \(expected.format)")
            problems.check(actual.path == expected.path, "\(id): path \(actual.path), model \(expected.path)")
            // Byte for byte what the file holds.
            problems.check(
                actual.fileBytes == expected.fileBytes,
                "\(id): file \(text(actual.fileBytes)), model \(text(expected.fileBytes))")
            // The file decodes back to the same path, with the scene's format pinned and under auto.
            let pinned = SceneFileCodec(
                policy: actual.format == .codable ? .codable : .array, maxFileBytes: .max, maxDepth: .max)
            let decoded = try pinned.decode(actual.fileBytes)
            problems.check(decoded.path == actual.path, "\(id): pinned decode \(decoded.path)")
            problems.check(decoded.format == (actual.path.isEmpty ? nil : actual.format), "\(id): pinned format")
            let auto = try SceneFileCodec(maxFileBytes: .max, maxDepth: .max).decode(actual.fileBytes)
            problems.check(auto.path == actual.path && auto.format == decoded.format, "\(id): auto decode \(auto.path)")
        }
        // Revisions: one per accepted change, strictly increasing, none skipped.
        for (offset, record) in model.log.enumerated() where record.clock.revision != model.start + UInt64(offset) + 1 {
            problems.check(false, "model revision \(record.clock.revision) at offset \(offset)")
        }
        // History: the newest records, exactly the model's log.
        let kept = Array(model.log.suffix(historyLimit))
        problems.check(
            store.history.records == kept, "history \(store.history.records.count) records, model \(kept.count)")
        let baseline =
            model.log.count > historyLimit ? model.log[model.log.count - historyLimit - 1].clock.revision : model.start
        problems.check(store.history.baseline == baseline, "baseline \(store.history.baseline), model \(baseline)")
        for since in [model.start, baseline, baseline &- 1, model.revision, model.revision + 1] {
            let changes = store.history.changes(after: since)
            if since < baseline || since > model.revision {
                problems.check(changes == nil, "changes(after: \(since)) should be nil")
            } else {
                problems.check(
                    changes == model.log.filter { $0.clock.revision > since }, "changes(after: \(since)) differ")
            }
        }
        for id in ids {
            let newest = Array(kept.filter { $0.scene == id }.reversed().prefix(3))
            problems.check(store.history.records(for: id, limit: 3) == newest, "records(for: \(id)) differ")
        }
    }
}
