/// Client changes: checked against the current state first (``SceneStore/plan(_:on:ifVersion:origin:overwritingUnreadFile:)``),
/// then committed once the daemon has written the scene file, so that a failed write changes nothing.
extension SceneStore {
    /// What a client asks for.
    public enum Operation: Sendable, Equatable {
        case set(path: [Element], format: SceneFormat?)
        case push([Element])
        case pop(count: Int)
        case popToRoot
        case delete
    }

    /// A checked change, ready to be written to the file and committed.
    public struct Plan: Sendable {
        public let scene: SceneID
        /// The new state, or `nil` for a delete.
        public let state: SceneState?
        /// What the file must hold afterwards; `nil` means remove it.
        public let fileBytes: [UInt8]?
        /// `true` when the result equals the current state: nothing to write, nothing to commit.
        public let isNoOp: Bool
        let origin: Origin
        let conflict: Conflict?
        /// The revision the plan was made at; committing a stale plan is a programming error.
        let baseRevision: UInt64
    }

    /// Checks a client change against the current state without changing anything.
    ///
    /// - Parameter overwritingUnreadFile: the daemon just merged a file change it had not read before; the client's
    ///   change then records the state it overwrites as a conflict, so the app's write is never lost silently.
    public func plan(
        _ operation: Operation, on id: SceneID, ifVersion: UInt64? = nil, origin: Origin,
        overwritingUnreadFile: Bool = false
    ) throws(SceneSyncError) -> Plan {
        try plan(
            operation, on: id, ifVersion: ifVersion, origin: origin, overwritingUnreadFile: overwritingUnreadFile,
            current: entries[id])
    }

    /// The `conflict` a change with `if_version` of `expected` gets when the scene is `current` (`nil`: it does not
    /// exist), or `nil` when that is the version it expects. A change planned on a state that changed before it was
    /// made is asked again with the state it finally came after.
    public static func versionConflict(
        _ id: SceneID, expected ifVersion: UInt64, current: SceneState?
    ) -> SceneSyncError? {
        guard ifVersion != (current?.version ?? 0) else { return nil }
        let expectation = ifVersion == 0 ? "not to exist" : "to be at version \(ifVersion)"
        let actual = current.map { "is at version \($0.version)" } ?? "does not exist"
        return SceneSyncError(.conflict, "scene \(id) was expected \(expectation) but \(actual)", current: current)
    }

    /// ``plan(_:on:ifVersion:origin:overwritingUnreadFile:)`` against `current` rather than the stored entry: a
    /// ``ChangeBatch`` plans each change on top of the ones before it in the batch.
    func plan(
        _ operation: Operation, on id: SceneID, ifVersion: UInt64?, origin: Origin, overwritingUnreadFile: Bool,
        current: Entry?
    ) throws(SceneSyncError) -> Plan {
        if let ifVersion, let conflict = Self.versionConflict(id, expected: ifVersion, current: current?.state) {
            throw conflict
        }
        let conflict = overwritingUnreadFile ? current.map { Conflict(path: $0.state.path, origin: $0.origin) } : nil

        let newPath: [Element]
        // Built once, when first needed: each access of `state.path` is an array of its own.
        lazy var currentPath = current?.state.path ?? []
        let format: SceneFormat
        switch operation {
        case .delete:
            guard current != nil else { throw SceneSyncError(.notFound, "no scene \(id)") }
            return Plan(
                scene: id, state: nil, fileBytes: nil, isNoOp: false, origin: origin, conflict: conflict,
                baseRevision: revision)
        case .set(let path, let requested):
            let kind = SceneFormat.of(path)
            if path.isEmpty == false, kind == nil {
                throw .badRequest("path mixes elements with and without a type")
            }
            if let requested, let kind, requested != kind {
                throw .badRequest(
                    kind == .codable
                        ? "elements with a type cannot be stored in an array scene"
                        : "codable scenes need a type for every element")
            }
            format = requested ?? kind ?? current?.state.format ?? codec.policy.pinned ?? .array
            newPath = SceneStore.keepingEqualElements(of: currentPath, in: path)
        case .push(let elements):
            guard !elements.isEmpty else { throw .badRequest("push needs at least one element") }
            guard let kind = SceneFormat.of(elements) else {
                throw .badRequest("elements mix values with and without a type")
            }
            let base = currentPath
            if !base.isEmpty, let existing = current?.state.format, existing != kind {
                throw .badRequest(
                    existing == .codable
                        ? "scene \(id) is codable: every pushed element needs a type"
                        : "scene \(id) is an array path: pushed elements must not have a type")
            }
            format = kind
            newPath = base + elements
        case .pop(let count):
            guard let current else { throw SceneSyncError(.notFound, "no scene \(id)") }
            guard count >= 0 else { throw .badRequest("count must not be negative") }
            guard count <= current.state.depth else {
                throw SceneSyncError(
                    .outOfRange, "cannot pop \(count) from scene \(id) of depth \(current.state.depth)")
            }
            format = current.state.format
            newPath = Array(currentPath.dropLast(count))
        case .popToRoot:
            guard let current else { throw SceneSyncError(.notFound, "no scene \(id)") }
            format = current.state.format
            newPath = []
        }
        if let pinned = codec.policy.pinned, !newPath.isEmpty, format != pinned {
            throw .badRequest("scenes.format is pinned to \(pinned.rawValue)")
        }

        if let current, currentPath == newPath,
            current.state.format == format || newPath.isEmpty
        {
            return Plan(
                scene: id, state: current.state, fileBytes: nil, isNoOp: true, origin: origin, conflict: nil,
                baseRevision: revision)
        }
        guard newPath.count <= codec.maxDepth else {
            throw SceneSyncError(
                .tooLarge, "path of \(newPath.count) elements exceeds scenes.max_depth (\(codec.maxDepth))")
        }
        let bytes = SceneFileCodec.encode(newPath, as: format)
        guard bytes.count <= codec.maxFileBytes else {
            throw SceneSyncError(
                .tooLarge,
                "scene file of \(bytes.count) bytes would exceed scenes.max_file_bytes (\(codec.maxFileBytes))")
        }
        let next = revision + 1
        let state = SceneState(
            id: id, version: (current?.state.version ?? 0) + 1, created: current?.state.created ?? next,
            modified: next, format: format, path: newPath, phase: current?.state.phase)
        return Plan(
            scene: id, state: state, fileBytes: bytes, isNoOp: false, origin: origin, conflict: conflict,
            baseRevision: revision)
    }

    /// `path` with every element that equals the current element at the same position replaced by that element, so
    /// that its bytes (`1.0` rather than `1`, the file's own spacing) survive a client's `set` (§3).
    static func keepingEqualElements(of current: [Element], in path: [Element]) -> [Element] {
        guard !current.isEmpty else { return path }
        var kept = path
        for index in kept.indices where index < current.count && kept[index] == current[index] {
            kept[index] = current[index]
        }
        return kept
    }

    /// Applies a plan made at the current revision. Returns the change record, or `nil` for a no-op.
    @discardableResult
    public mutating func commit(_ plan: Plan) -> ChangeRecord? {
        precondition(plan.baseRevision == revision, "a plan must be committed before any other change")
        return commitUnchecked(plan)
    }

    /// Commits a plan whose base the caller has checked (a batch checks its own base once).
    mutating func commitUnchecked(_ plan: Plan) -> ChangeRecord? {
        guard !plan.isNoOp else { return nil }
        let digest = plan.fileBytes.map(SceneStore.digest)
        if let state = plan.state {
            return accept(
                state: state, origin: plan.origin, conflict: plan.conflict, fileVersion: state.version,
                fileDigest: digest)
        }
        return acceptDelete(plan.scene, origin: plan.origin, conflict: plan.conflict)
    }
}
