import SceneSyncClient
import SceneSyncCore

/// How values read in human output. One place, so that `get`, `history` and `watch` show paths and origins alike.
enum Format {
    /// `[a, b, c]`, root first: an array scene's values as JSON, a codable scene's as `Type value`.
    static func path(_ path: [Element]) -> String {
        "[" + path.map(element).joined(separator: ", ") + "]"
    }

    static func element(_ element: Element) -> String {
        var value: [UInt8] = []
        JSONWriter.appendCompact(element.item, to: &value)
        let text = String(decoding: value, as: UTF8.self)
        return element.tag.map { "\($0) \(text)" } ?? text
    }

    /// `file`, `client NAME`, or `client pid N` for a client that gave no name; `remote HOST` for another host's.
    static func origin(_ origin: Origin) -> String {
        switch origin.source {
        case .file: return "file"
        case .remote:
            guard let host = origin.host else { return "remote" }
            return "remote \(host)"
        case .client:
            if let client = origin.client { return "client \(client)" }
            if let pid = origin.pid { return "client pid \(pid)" }
            return "client"
        }
    }

    static func revision(_ revision: UInt64) -> String { "r\(revision)" }

    /// `1.5 KiB`, `12.0 MiB`.
    static func bytes(_ count: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(count) bytes" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// `3d 4h 5m 6s`, leading zero units left out.
    static func duration(seconds: Int) -> String {
        let parts = [(seconds / 86400, "d"), (seconds / 3600 % 24, "h"), (seconds / 60 % 60, "m"), (seconds % 60, "s")]
        let shown = parts.drop { $0.0 == 0 && $0.1 != "s" }
        return shown.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }

    /// `wrote snapshot r42: 3 scenes, 1.2 KiB, /var/lib/scenesync/snapshots/…`
    static func snapshot(_ snapshot: SnapshotInfo) -> String {
        "wrote snapshot \(revision(snapshot.revision)): \(snapshot.scenes) scene\(snapshot.scenes == 1 ? "" : "s"), "
            + "\(bytes(snapshot.bytes)), \(snapshot.path)"
    }
}
