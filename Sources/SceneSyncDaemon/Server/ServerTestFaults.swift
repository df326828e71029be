/// Faults a test cannot cause from outside, played by test builds under `SCENESYNC_TEST_HOOKS=1` only.
public struct ServerTestFaults: Sendable {
    /// Every `SO_PEERCRED` read fails (`SCENESYNC_TEST_FAIL_PEERCRED=1`).
    public var failPeerCredentials = false

    public init() {}

    static func from(environment: [String: String], testHooks: Bool) -> ServerTestFaults {
        var faults = ServerTestFaults()
        #if SCENESYNC_TEST_HOOKS
        guard testHooks else { return faults }
        faults.failPeerCredentials = environment["SCENESYNC_TEST_FAIL_PEERCRED"] == "1"
        #endif
        return faults
    }
}
