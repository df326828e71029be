public import SceneSyncCore

/// The part of the configuration the engine acts on; replaced as a whole on reload. The connections' bounds and
/// timers are not here but in ``ConnectionLimits``, which the server reads too.
public struct EngineSettings: Sendable, Equatable {
    public var scenesDirectory: String
    public var codec: SceneFileCodec
    public var restoreMissing: Bool
    public var snapshotsKeep: Int
    public var historyLimit: Int
    /// `scenes.write_wait_ms`.
    public var writeWait: Duration
    public var writeUIDs: Set<UInt32>
    public var writeGIDs: Set<UInt32>
    /// Enables `.scenesync-test-*` files (an injected inotify overflow, an app's write racing the daemon's rename).
    /// Off unless `SCENESYNC_TEST_HOOKS=1` in a test build; the released binaries ignore it.
    public var testHooks: Bool
    /// How many revisions one durable reservation covers (``StateDirectory/revisionBlock``). Test builds under test
    /// hooks take `SCENESYNC_TEST_REVISION_BLOCK`, so that a test crosses a block in dozens of changes.
    public var revisionBlock: UInt64 = StateDirectory.revisionBlock
    /// Whether small file steps run on the engine's own thread (see ``EngineCore/isInline(files:bytes:)``). Always
    /// in the daemon; the engine harness turns it off for some schedules, so that every file step is a blocking job
    /// whose halves an app's write can fall between.
    var inlinesSmallFileSteps = true

    public init(
        scenesDirectory: String, codec: SceneFileCodec = SceneFileCodec(), restoreMissing: Bool = true,
        snapshotsKeep: Int = 3, historyLimit: Int = 10_000, writeUIDs: Set<UInt32> = [], writeGIDs: Set<UInt32> = [],
        writeWait: Duration = .milliseconds(1000),
        testHooks: Bool = false
    ) {
        self.writeWait = writeWait
        self.scenesDirectory = scenesDirectory
        self.codec = codec
        self.restoreMissing = restoreMissing
        self.snapshotsKeep = snapshotsKeep
        self.historyLimit = historyLimit
        self.writeUIDs = writeUIDs
        self.writeGIDs = writeGIDs
        self.testHooks = testHooks
    }
}

/// Who is on the other end of a connection (SO_PEERCRED).
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}
