import Logging
import Synchronization

/// The ``LogRateLimit`` of one kind of line a client can cause, shared by every connection's task.
final class ClientLogLimiter: Sendable {
    private let limit: Mutex<LogRateLimit>

    init(_ limit: LogRateLimit = LogRateLimit()) {
        self.limit = Mutex(limit)
    }

    /// Logs `message` unless the limit is reached; the first line after a run of left-out ones says how many.
    func log(
        _ logger: Logger, level: Logger.Level, _ message: @autoclosure () -> Logger.Message,
        metadata: Logger.Metadata = [:]
    ) {
        let decision = limit.withLock { $0.admit(at: .now) }
        guard case .log(let suppressed) = decision else { return }
        var metadata = metadata
        if suppressed > 0 { metadata["suppressed"] = "\(suppressed) similar lines since the last one" }
        logger.log(level: level, message(), metadata: metadata)
    }
}
