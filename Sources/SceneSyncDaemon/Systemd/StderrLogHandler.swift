public import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes each log message as exactly one line to stderr, the way journald and a terminal both want it.
///
/// Under systemd (`JOURNAL_STREAM` set) a line starts with its syslog priority, `<6>`, which journald turns into
/// the entry's priority and strips; there is no timestamp because journald records its own. Elsewhere a line
/// starts with an ISO-8601 UTC timestamp and the level name.
///
/// Line breaks and other control characters inside a message or a metadata value are escaped (`\n`), so one
/// message can never pose as several entries. Each line goes out in a single `write(2)`, from the one thread of
/// ``StderrWriter``, so that no caller waits for stderr.
public struct StderrLogHandler: LogHandler {
    /// The level this handler filters at: the process-wide ``LogLevel`` when it follows one (so a reload changes
    /// every logger at once), else its own.
    public var logLevel: Logger.Level {
        get { sharedLevel?.level ?? fixedLevel }
        set {
            fixedLevel = newValue
            sharedLevel = nil
        }
    }
    private var fixedLevel: Logger.Level
    private var sharedLevel: LogLevel?
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    /// The logger's label, written before the message so that lines from different components can be told apart.
    public let label: String
    /// Whether lines carry a priority prefix instead of a timestamp.
    public let journald: Bool

    /// A handler for `LoggingSystem.bootstrap`; it checks this process's `JOURNAL_STREAM` once, here. The daemon
    /// decides from the environment it was given instead (``init(label:following:journald:)``).
    public init(label: String, logLevel: Logger.Level = .info, metadataProvider: Logger.MetadataProvider? = nil) {
        let stream = getenv("JOURNAL_STREAM").map { ["JOURNAL_STREAM": String(cString: $0)] } ?? [:]
        self.init(
            label: label,
            logLevel: logLevel,
            metadataProvider: metadataProvider,
            journald: Self.isJournald(environment: stream)
        )
    }

    init(label: String, logLevel: Logger.Level, metadataProvider: Logger.MetadataProvider?, journald: Bool) {
        self.label = label
        self.fixedLevel = logLevel
        self.metadataProvider = metadataProvider
        self.journald = journald
    }

    /// A handler whose level follows `level`, for `LoggingSystem.bootstrap` in the daemon. `journald` is
    /// ``isJournald(environment:)`` of the daemon's environment, decided once by the caller rather than per logger.
    public init(label: String, following level: LogLevel, journald: Bool) {
        self.init(label: label, logLevel: level.level, metadataProvider: nil, journald: journald)
        self.sharedLevel = level
    }

    /// Whether stderr is journald's stream: systemd sets `JOURNAL_STREAM` only for a service whose stderr it
    /// connected to the journal, and an empty value names no stream. Taking the environment as a value lets it be
    /// decided without reading, or in tests changing, the environment of the running process.
    public static func isJournald(environment: [String: String]) -> Bool {
        environment["JOURNAL_STREAM"].map { !$0.isEmpty } ?? false
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        StderrWriter.shared.write(line(for: event) + "\n")
    }

    /// The line for `event`, with the handler's, the provider's and the event's metadata (in rising precedence) and
    /// the event's error as `error=`.
    func line(for event: LogEvent) -> String {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let attached = event.metadata { merged.merge(attached) { _, new in new } }
        if let error = event.error, merged["error"] == nil { merged["error"] = "\(error)" }
        return Self.formatLine(
            level: event.level,
            label: label,
            message: event.message.description,
            metadata: merged,
            journald: journald,
            timestamp: journald ? "" : Self.now()
        )
    }

    static func now() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return RFC3339.format(secondsSinceEpoch: Int64(now.tv_sec), nanoseconds: Int64(now.tv_nsec))
    }

    /// One line without its newline: `<6>label: message key=value` under journald, otherwise
    /// `2026-11-21T08:46:35.123Z info label: message key=value`. Metadata is sorted by key so that equal events give
    /// equal lines.
    static func formatLine(
        level: Logger.Level,
        label: String,
        message: String,
        metadata: Logger.Metadata,
        journald: Bool,
        timestamp: String
    ) -> String {
        var line = journald ? "<\(syslogPriority(level))>" : "\(timestamp) \(level.rawValue) "
        line += escaped(label) + ": " + escaped(message)
        for key in metadata.keys.sorted() {
            guard let value = metadata[key] else { continue }
            line += " " + escaped(key) + "=" + escaped(quotedIfNeeded(value.description))
        }
        return line
    }

    /// The syslog priority journald reads from the `<N>` prefix (`sd-daemon.h`'s `SD_DEBUG` … `SD_CRIT`).
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// `\n`, `\r` and the other control characters except tab, as `\n`, `\r` and `\u{1B}`.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isEscaped) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case _ where isEscaped(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F
    }

    /// A value with spaces, quotes or `=` in it, or an empty one, is quoted so that `key=value` pairs stay
    /// separable.
    static func quotedIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\t" || $0 == "\"" || $0 == "=" }
        guard needsQuotes else { return value }
        return "\"" + value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    /// One `write(2)` per line: the kernel keeps a single write to a pipe (up to `PIPE_BUF`) or to journald's stream
    /// socket in one piece, whereas buffered stdio could split a line between threads. A short write — only on a
    /// signal or an oversized line — is completed rather than dropped.
    static func emit(_ text: String, to fd: Int32) {
        emit(Array(text.utf8), to: fd)
    }

    static func emit(_ line: [UInt8], to fd: Int32) {
        var bytes = line[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return  // Nowhere left to report a failing stderr.
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
