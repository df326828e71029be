import SceneSyncCore

extension SceneSyncError {
    /// The daemon's `error` object of a failed response. An unknown code (from a newer daemon) becomes `internal`
    /// with the code kept in the message, so that nothing the daemon said is lost.
    static func decode(_ error: JSONValue?) -> SceneSyncError {
        guard let error, let codeName = error["code"]?.stringValue else {
            return SceneSyncError(.internal, "the daemon refused the request without an error object")
        }
        let message = error["message"]?.stringValue ?? ""
        guard let code = ErrorCode(rawValue: codeName) else {
            return SceneSyncError(.internal, "\(codeName): \(message)")
        }
        var current: SceneState? = nil
        if code == .conflict, let scene = error["current"], scene != .null {
            // `current` is optional detail: a scene this client cannot read still leaves the conflict reported.
            current = try? Wire.decodeScene(scene)
        }
        return SceneSyncError(code, message, current: current)
    }
}
