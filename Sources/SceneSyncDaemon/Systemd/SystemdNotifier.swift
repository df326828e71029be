import CSystemd

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Tells systemd what the daemon is doing, over the `NOTIFY_SOCKET` datagram protocol of `sd_notify(3)`.
///
/// The datagram is sent here rather than through `sd_notify`, and `NOTIFY_SOCKET` and the watchdog setting are read
/// from an environment passed in rather than by libsystemd from the process's, so that a notifier can be pointed at
/// any socket (tests listen on a temporary one) without changing the process environment, which other threads read
/// concurrently. Addresses this code does not understand (neither a path nor `@abstract`) are handed to libsystemd,
/// which knows every form its version supports.
///
/// Nothing is removed from the environment, in line with ``SocketActivation``: `WATCHDOG_PID` and `LISTEN_PID`
/// already keep child processes from acting on variables meant for the daemon, and leaving them in place makes
/// repeated reads give the same answer.
///
/// When the process was not started by systemd every method is a no-op, so callers never need to check
/// ``isEnabled`` first.
public struct SystemdNotifier: Sendable {
    /// The `NOTIFY_SOCKET` address: an absolute path, or `@name` for the abstract namespace. `nil` disables the
    /// notifier.
    let notifySocket: String?

    /// How often systemd expects `WATCHDOG=1`, when it set `WATCHDOG_USEC` for this very process; `nil` otherwise.
    ///
    /// Ping at half this interval so that one late tick does not get the service killed.
    public let watchdogInterval: Duration?

    /// The longest `STATUS=` text sent. `systemctl status` shows it on one line; a longer text only gets cut there.
    static let maximumStatusLength = 200

    /// Takes `NOTIFY_SOCKET` and the watchdog settings (`WATCHDOG_USEC`, `WATCHDOG_PID`) from `environment`, the one
    /// the daemon was started with.
    public init(environment: [String: String]) {
        self.init(
            notifySocket: environment["NOTIFY_SOCKET"],
            watchdogInterval: Self.watchdogInterval(environment: environment, pid: getpid())
        )
    }

    /// A notifier for an explicit socket address; an empty address counts as none, like an empty `NOTIFY_SOCKET`.
    init(notifySocket: String?, watchdogInterval: Duration?) {
        self.notifySocket = notifySocket?.isEmpty == false ? notifySocket : nil
        self.watchdogInterval = watchdogInterval
    }

    /// Whether systemd listens for notifications (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { notifySocket != nil }

    /// Start-up finished: systemd considers a `Type=notify` service started only now, and starts what waits for it.
    public func ready(status: String? = nil) throws(SystemdNotifyError) {
        try send(Self.withStatus("READY=1", status))
    }

    /// Replaces the one-line status `systemctl status` shows. Newlines and other control characters become spaces
    /// and the text is cut to ``maximumStatusLength`` characters, because systemd shows only one line.
    public func status(_ text: String) throws(SystemdNotifyError) {
        try send("STATUS=" + Self.oneLine(text))
    }

    /// A reload started. `MONOTONIC_USEC` travels in the same datagram, as `sd_notify(3)` asks: the manager uses the
    /// timestamp to match this reload to the request that caused it, and a separate datagram could not be matched.
    public func reloading() throws(SystemdNotifyError) {
        try send("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())")
    }

    /// The reload finished: systemd leaves the "reloading" state only on a new `READY=1`.
    public func readyAfterReload(status: String? = nil) throws(SystemdNotifyError) {
        try ready(status: status)
    }

    /// Shutdown started, so systemd shows "deactivating" and does not mistake the exit for a crash.
    public func stopping() throws(SystemdNotifyError) {
        try send("STOPPING=1")
    }

    /// Proves liveness to the watchdog; send it from the loop whose progress it should vouch for.
    public func watchdogPing() throws(SystemdNotifyError) {
        try send("WATCHDOG=1")
    }

    /// Asks for more time than `TimeoutStartSec=`/`TimeoutStopSec=` allow, for a start-up or shutdown step that is
    /// slow but still progressing (a large snapshot). systemd extends the timeout to `duration` from now; repeat
    /// before it runs out.
    public func extendTimeout(_ duration: Duration) throws(SystemdNotifyError) {
        try send("EXTEND_TIMEOUT_USEC=\(Self.microseconds(duration))")
    }

    /// Sends one datagram of newline-separated `KEY=value` assignments. Everything meant to be seen together must
    /// be in one call: systemd handles each datagram on its own.
    func send(_ message: String) throws(SystemdNotifyError) {
        guard let notifySocket else { return }
        guard notifySocket.hasPrefix("/") || notifySocket.hasPrefix("@") else {
            // A form libsystemd may know (vsock: in newer versions). It reads NOTIFY_SOCKET itself, from the process
            // environment, so it is asked only when that names the same socket as the one this notifier was given.
            guard getenv("NOTIFY_SOCKET").map({ String(cString: $0) }) == notifySocket else {
                throw SystemdNotifyError(operation: "NOTIFY_SOCKET \(notifySocket)", errno: EAFNOSUPPORT)
            }
            let result = sd_notify(0, message)
            if result < 0 { throw SystemdNotifyError(operation: "sd_notify", errno: -result) }
            return
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(notifySocket.utf8)
        let abstract = path[0] == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        // A path needs its terminating NUL inside sun_path; an abstract name is counted by length instead.
        guard path.count + (abstract ? 0 : 1) <= MemoryLayout.size(ofValue: address.sun_path) else {
            throw SystemdNotifyError(operation: "NOTIFY_SOCKET \(notifySocket)", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))

        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemdNotifyError(operation: "socket", errno: errno) }
        defer { close(fd) }
        let bytes = Array(message.utf8)
        var sent: Int
        repeat {
            sent = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    // Never block: a listener that stopped reading must not stall the daemon. systemd always
                    // reads; when a queue is full anyway, the message is dropped and reported to the caller.
                    sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), socketAddress, length)
                }
            }
        } while sent < 0 && errno == EINTR
        guard sent >= 0 else { throw SystemdNotifyError(operation: "sendto \(notifySocket)", errno: errno) }
    }

    /// `WATCHDOG_USEC` when `WATCHDOG_PID` is unset or names `pid`, decided as `sd_watchdog_enabled` decides so that
    /// `WATCHDOG_PID` is honoured exactly as systemd documents it: a setting inherited from a parent under a
    /// watchdog, or one that cannot be read (not a number, 0, infinity as `UInt64.max`), arms no watchdog here.
    static func watchdogInterval(environment: [String: String], pid: pid_t) -> Duration? {
        guard let value = environment["WATCHDOG_USEC"], let usec = UInt64(value), usec > 0, usec < .max
        else { return nil }
        if let watchdogPID = environment["WATCHDOG_PID"] {
            guard pid_t(watchdogPID) == pid else { return nil }
        }
        return .microseconds(Int64(clamping: usec))
    }

    static func withStatus(_ message: String, _ status: String?) -> String {
        guard let status else { return message }
        return message + "\nSTATUS=" + oneLine(status)
    }

    /// A status line cannot contain a newline: systemd would read the rest as another assignment.
    static func oneLine(_ text: String) -> String {
        // By bytes when the text is ASCII, as the status line always is: it goes out ten times a second under load,
        // and splitting it into characters cost more than the change it reports. Each ASCII byte is one character,
        // but for `\r\n`, which is one.
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return oneLine(characters: text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(text.utf8.count, maximumStatusLength))
        var afterReturn = false
        for byte in text.utf8 {
            if byte == 0x0A, afterReturn {
                afterReturn = false
                continue
            }
            afterReturn = byte == 0x0D
            bytes.append(byte < 0x20 || byte == 0x7F ? 0x20 : byte)
            if bytes.count == maximumStatusLength { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``oneLine(_:)`` by characters, for text that is not ASCII.
    static func oneLine(characters text: String) -> String {
        let flattened = text.map { character -> Character in
            let isControl = character.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false
            return isControl || character.isNewline ? " " : character
        }
        return String(flattened.prefix(maximumStatusLength))
    }

    /// `CLOCK_MONOTONIC` in microseconds, the clock systemd compares `MONOTONIC_USEC` against.
    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    /// Whole microseconds, negative durations as 0 and overlong ones saturated, since systemd parses an unsigned
    /// 64-bit value.
    static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        if overflow { return .max }
        let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000_000))
        return carry ? .max : total
    }
}

/// A notification that could not be delivered. The daemon logs it and carries on: systemd's own timeouts report a
/// readiness or watchdog message that never arrived.
public struct SystemdNotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, with the socket address where there is one.
    public var operation: String
    public var errno: Int32

    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        "systemd notification: \(operation): \(String(cString: strerror(errno)))"
    }
}
