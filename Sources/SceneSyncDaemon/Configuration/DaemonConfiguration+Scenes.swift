public import SceneSyncCore

extension DaemonConfiguration {
    /// The `scenes` section: where the scene files are and how they are read and written, apart from the daemon's
    /// own state, so that the file-facing settings travel together.
    public struct Scenes: Sendable, Equatable {
        /// `scenes.directory`
        public var directory: String
        /// `scenes.format`: `auto`, `codable` or `array`.
        public var format: FormatPolicy
        /// `scenes.restore_missing`
        public var restoreMissing: Bool
        /// `scenes.max_file_bytes`
        public var maxFileBytes: Int
        /// `scenes.max_depth`
        public var maxDepth: Int
        /// `scenes.write_wait_ms`: how long a client change waits for an app that holds its scene file open for
        /// writing.
        public var writeWait: Duration
    }

    // The flat names predate the sections; they stay so that callers need not change.

    /// `scenes.directory`
    public var scenesDirectory: String {
        get { scenes.directory }
        set { scenes.directory = newValue }
    }

    /// `scenes.format`: `auto`, `codable` or `array`.
    public var format: FormatPolicy {
        get { scenes.format }
        set { scenes.format = newValue }
    }

    /// `scenes.restore_missing`
    public var restoreMissing: Bool {
        get { scenes.restoreMissing }
        set { scenes.restoreMissing = newValue }
    }

    /// `scenes.max_file_bytes`
    public var maxFileBytes: Int {
        get { scenes.maxFileBytes }
        set { scenes.maxFileBytes = newValue }
    }

    /// `scenes.max_depth`
    public var maxDepth: Int {
        get { scenes.maxDepth }
        set { scenes.maxDepth = newValue }
    }

    /// `scenes.write_wait_ms`
    public var writeWait: Duration {
        get { scenes.writeWait }
        set { scenes.writeWait = newValue }
    }
}
