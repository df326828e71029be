import Foundation
import SceneSyncCore

/// A scene as the harness compares it: its version and its values, root first. Every path of a schedule is of
/// codable `T.V` integers, so the values say all there is of it.
struct HarnessScene: Equatable, CustomStringConvertible {
    var version: UInt64
    var values: [Int]

    var description: String { "v\(version) \(values)" }

    /// The same values, whatever the versions.
    func holds(_ values: [Int]) -> Bool { self.values == values }

    /// The values of a scene file's content: codable (`T.V` tags and items, top of the stack first) or empty; an
    /// item that is not an integer reads as -1, which no schedule writes.
    static func values(ofFile bytes: [UInt8]) -> [Int] {
        guard let items = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [Any] else { return [-1] }
        var values: [Int] = []
        var index = 1
        while index < items.count {
            values.append((items[index] as? String).flatMap { Int($0) } ?? -1)
            index += 2
        }
        return values.reversed()
    }

    /// The values of a path on the wire (`[{"type":…,"value":…}]`, root first).
    static func values(ofWire path: Any?) -> [Int]? {
        guard let elements = path as? [[String: Any]] else { return nil }
        return elements.map { ($0["value"] as? NSNumber)?.intValue ?? -1 }
    }

    /// A scene as the wire shows it (`get`, `state`, `error.current`), `nil` for JSON null or anything else.
    init?(wire object: Any?) {
        guard let scene = object as? [String: Any], let version = scene["version"] as? NSNumber,
            let values = Self.values(ofWire: scene["path"])
        else { return nil }
        self.init(version: version.uint64Value, values: values)
    }

    init(version: UInt64, values: [Int]) {
        self.version = version
        self.values = values
    }
}

extension ChangeRecord {
    /// The scene after this change; `nil` for a deletion.
    var harnessScene: HarnessScene? {
        guard kind == .set, let path else { return nil }
        return HarnessScene(
            version: version, values: HarnessScene.values(ofFile: SceneFileCodec.encode(path, as: format)))
    }
}

/// The engine's history (which holds every change of a schedule) read as each scene's state at any revision.
struct HarnessTimeline {
    let records: [ChangeRecord]

    /// The last change of `scene` at or before `revision`.
    func last(_ scene: SceneID, atOrBefore revision: UInt64) -> ChangeRecord? {
        records.last { $0.scene == scene && $0.clock.revision <= revision }
    }

    /// The scene at `revision`: `nil` when it did not exist.
    func state(_ scene: SceneID, at revision: UInt64) -> HarnessScene? {
        last(scene, atOrBefore: revision)?.harnessScene
    }

    /// Every state the scene had from `first` through `last`: the one at `first`, then each change's.
    func states(_ scene: SceneID, from first: UInt64, through last: UInt64) -> [HarnessScene?] {
        [state(scene, at: first)]
            + records.filter { $0.scene == scene && $0.clock.revision > first && $0.clock.revision <= last }
            .map(\.harnessScene)
    }
}
