public import Logging
import Synchronization

/// The process-wide log level, shared by every logger so that a reload changes it everywhere at once.
public final class LogLevel: Sendable {
    public static let shared = LogLevel()

    private let raw = Atomic<UInt8>(LogLevel.index(of: .info))

    public var level: Logger.Level { Logger.Level.allCases[Int(raw.load(ordering: .relaxed))] }

    public func set(_ level: Logger.Level) { raw.store(LogLevel.index(of: level), ordering: .relaxed) }

    private static func index(of level: Logger.Level) -> UInt8 {
        UInt8(Logger.Level.allCases.firstIndex(of: level) ?? 2)
    }
}
