public import SceneSyncCore

/// The answer to `hello`: which daemon this is and where it stands.
///
/// `pid` and `epoch` together tell a client whether it is still talking to the daemon it talked to before: a new
/// pid with the same epoch is a clean restart, a new epoch means state continuity was lost.
public struct ServerInfo: Sendable, Equatable {
    /// Always `scenesyncd` for this daemon.
    public var server: String
    /// The daemon's version.
    public var version: String
    /// The protocol version; this library speaks 1.
    public var protocolVersion: Int
    /// The daemon's process ID.
    public var pid: Int32
    /// The daemon's clock when it answered.
    public var clock: Clock
    /// The absolute path of the daemon's scenes directory, where an app that writes its files puts them; `nil`
    /// from a daemon too old to say.
    public var scenesDirectory: String?

    /// Info with these values, for tests.
    public init(
        server: String, version: String, protocolVersion: Int, pid: Int32, clock: Clock, scenesDirectory: String? = nil
    ) {
        self.server = server
        self.version = version
        self.protocolVersion = protocolVersion
        self.pid = pid
        self.clock = clock
        self.scenesDirectory = scenesDirectory
    }

    /// Decodes a `hello` response.
    public init(response: JSONValue) throws(SceneSyncConnectionError) {
        let what = "hello response"
        let pid = try response.int("pid", in: what)
        guard let pid32 = Int32(exactly: pid) else { throw .protocolViolation("\(what): pid \(pid) out of range") }
        self.init(
            server: try response.string("server", in: what), version: try response.string("version", in: what),
            protocolVersion: try response.int("protocol", in: what), pid: pid32, clock: try response.clock(in: what),
            scenesDirectory: response["scenes_dir"]?.stringValue)
    }
}
