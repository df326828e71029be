import SceneSyncCore

/// Field access for decoding the daemon's answers: a missing or mistyped field is a protocol violation naming the
/// field, so a daemon bug surfaces as a clear message rather than as a zero or an empty string.
extension JSONValue {
    func string(_ key: String, in what: String) throws(SceneSyncConnectionError) -> String {
        guard let value = self[key]?.stringValue else { throw missing(key, in: what) }
        return value
    }

    func uint(_ key: String, in what: String) throws(SceneSyncConnectionError) -> UInt64 {
        guard let value = self[key]?.uint64Value else { throw missing(key, in: what) }
        return value
    }

    func int(_ key: String, in what: String) throws(SceneSyncConnectionError) -> Int {
        guard let value = self[key]?.int64Value, let int = Int(exactly: value) else { throw missing(key, in: what) }
        return int
    }

    func sceneID(_ key: String, in what: String) throws(SceneSyncConnectionError) -> SceneID {
        let name = try string(key, in: what)
        guard let id = SceneID(name) else { throw .protocolViolation("\(what): invalid scene ID \(name)") }
        return id
    }

    /// `epoch` and `revision` members.
    func clock(in what: String) throws(SceneSyncConnectionError) -> Clock {
        Clock(epoch: try string("epoch", in: what), revision: try uint("revision", in: what))
    }

    func scene(in what: String) throws(SceneSyncConnectionError) -> SceneState {
        do throws(SceneSyncError) {
            return try Wire.decodeScene(self)
        } catch {
            throw .protocolViolation("\(what): \(error.message)")
        }
    }

    func change(in what: String) throws(SceneSyncConnectionError) -> ChangeRecord {
        do throws(SceneSyncError) {
            return try Wire.decodeChange(self)
        } catch {
            throw .protocolViolation("\(what): \(error.message)")
        }
    }

    private func missing(_ key: String, in what: String) -> SceneSyncConnectionError {
        .protocolViolation("\(what) has no valid \"\(key)\"")
    }
}
