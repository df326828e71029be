import SceneSyncCore
import SceneSyncDaemon

extension ClusterReplicator {
    /// A database change as the engine applies it, and what of it could not be read.
    ///
    /// A row another host wrote (another version, or damage in the database) may carry an origin or a conflict this
    /// host cannot read. The change itself is still applied: its content is what every host converges on. What
    /// cannot be read is left out and named in `problems`, for the log, never replaced by a guess (an origin of
    /// `file`, a conflict with an empty path).
    static func remoteChange(
        _ row: LogRow, scene: SceneID, localHost: String
    ) -> (change: RemoteChange, problems: [String]) {
        var problems: [String] = []
        var origin = Origin(source: .remote)
        if let parsed = try? JSONParser.parse(Array(row.origin.utf8)) {  // a failure is named in `problems`
            origin = Wire.decodeOrigin(parsed)
        } else {
            problems.append("its origin is not JSON: \(row.origin.prefix(80))")
        }
        origin.source = .remote
        origin.host = row.host
        let format = SceneFormat(rawValue: row.format)
        if format == nil, row.content != nil { problems.append("its format \(row.format) is unknown") }
        return (
            RemoteChange(
                scene: scene, fileBytes: row.content, format: format, origin: origin,
                conflict: conflict(row, localHost: localHost, problems: &problems)),
            problems
        )
    }

    /// The state the change overwrote, when the row says it overwrote one and this host can read it.
    private static func conflict(_ row: LogRow, localHost: String, problems: inout [String]) -> Conflict? {
        guard let bytes = row.conflictContent else { return nil }
        guard let format = row.conflictFormat.flatMap(SceneFormat.init) else {
            let name = row.conflictFormat ?? "(none)"
            problems.append("its conflict's format \(name) is unknown; the conflict is left out")
            return nil
        }
        let path: [Element]
        do throws(SceneFileError) {
            path = try SceneFileCodec(policy: format == .codable ? .codable : .array).decode(bytes).path
        } catch {
            problems.append("its conflict's content does not decode (\(error)); the conflict is left out")
            return nil
        }
        var origin = Origin(source: .file)
        if let text = row.conflictOrigin {
            if let parsed = try? JSONParser.parse(Array(text.utf8)) {  // a failure is named in `problems`
                origin = Wire.decodeOrigin(parsed)
                if parsed["source"]?.stringValue.flatMap(Origin.Source.init) == nil {
                    problems.append("its conflict's origin has no source this host knows: \(text.prefix(80))")
                }
            } else {
                problems.append("its conflict's origin is not JSON: \(text.prefix(80))")
            }
        }
        if row.conflictHost != localHost {
            origin.source = .remote
            origin.host = row.conflictHost
        }
        return Conflict(path: path, origin: origin)
    }
}
