/// Other hosts' changes (§9), planned against this host's state like client changes are.
extension SceneStore {
    /// Checks another host's change (§9): the scene file's exact bytes there (`nil` for a deletion), taken as that
    /// host's file says, with the origin and conflict it carries. Like a client change it is written to the file
    /// before it is committed; unlike one it is never refused for the scene's state, only for bytes this host's
    /// format policy or limits reject.
    /// - Parameter format: the format the origin host gave the scene. Bytes are read as that format, so a path that
    ///   auto detection would read otherwise (an array of strings that looks codable) arrives as it was sent.
    public func planReplica(
        _ id: SceneID, bytes: [UInt8]?, format sent: SceneFormat?, origin: Origin, conflict: Conflict?
    ) throws(SceneFileError) -> Plan {
        try planReplica(id, bytes: bytes, format: sent, origin: origin, conflict: conflict, current: entries[id])
    }

    /// ``planReplica(_:bytes:format:origin:conflict:)`` on top of `current`, the scene's state so far.
    func planReplica(
        _ id: SceneID, bytes: [UInt8]?, format sent: SceneFormat?, origin: Origin, conflict: Conflict?,
        current: Entry?
    ) throws(SceneFileError) -> Plan {
        guard let bytes else {
            return Plan(
                scene: id, state: nil, fileBytes: nil, isNoOp: current == nil, origin: origin, conflict: conflict,
                baseRevision: revision)
        }
        var reader = codec
        if let sent, codec.policy == .auto { reader.policy = sent == .codable ? .codable : .array }
        let decoded = try reader.decode(bytes)
        let format = decoded.format ?? sent ?? current?.state.format ?? codec.policy.pinned ?? .array
        if let current, current.state.elements.hasSameElements(as: decoded.elements), current.state.format == format,
            current.state.fileBytes == bytes
        {
            return Plan(
                scene: id, state: current.state, fileBytes: nil, isNoOp: true, origin: origin, conflict: nil,
                baseRevision: revision)
        }
        let next = revision + 1
        let state = SceneState(
            id: id, version: (current?.state.version ?? 0) + 1, created: current?.state.created ?? next,
            modified: next, format: format, elements: decoded.elements, layout: decoded.layout,
            phase: current?.state.phase)
        return Plan(
            scene: id, state: state, fileBytes: bytes, isNoOp: false, origin: origin, conflict: conflict,
            baseRevision: revision)
    }
}
