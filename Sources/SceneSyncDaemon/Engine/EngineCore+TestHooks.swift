import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The engine's test hooks: marker files that hold or fail a step, so that a test finds the engine mid-step.
extension EngineCore {
    /// The test hook that makes every listing of the scenes directory by a rescan fail with EMFILE while this file
    /// exists in the state directory: running out of descriptors cannot be caused from outside without harm.
    static let failListingHook = ".scenesync-test-fail-listing"

    /// The test hook (`SCENESYNC_TEST_HOOKS=1`) that holds a bulk step after its first chunk for as long as this
    /// file exists in the state directory: a test then finds the engine answering in the middle of the step,
    /// however slow or fast the machine, instead of racing a step of a fraction of a second.
    static let bulkHoldHook = ".scenesync-test-hold-bulk"

    /// The test hooks of a stuck engine: this marker in the scenes directory blocks the engine while
    /// ``engineHoldHook`` exists in the state directory.
    static let blockEngineHook = ".scenesync-test-block-engine"
    static let engineHoldHook = ".scenesync-test-hold-engine"

    /// Blocks the calling thread while `path` exists; test hooks only.
    static func waitWhileExists(_ path: String) {
        while access(path, F_OK) == 0 { usleep(1000) }
    }
}
