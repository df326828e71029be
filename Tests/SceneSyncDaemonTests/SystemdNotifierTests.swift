import Glibc
import Testing

@testable import SceneSyncDaemon

/// A stand-in for systemd's notification socket: a datagram socket bound to a fresh path (or an abstract name) that
/// hands back each message the notifier sent.
final class NotifyListener {
    let fd: Int32
    /// What `NOTIFY_SOCKET` would hold: the path, or `@name`.
    let address: String
    private let directory: String?

    init(abstract: Bool = false) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXFailure(operation: "socket") }
        var bytes: [UInt8]
        if abstract {
            directory = nil
            address = "@scenesync-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            bytes = Array(address.utf8)
            bytes[0] = 0
        } else {
            var template = Array("/tmp/ssn.XXXXXX".utf8CString)
            guard let created = mkdtemp(&template) else { throw POSIXFailure(operation: "mkdtemp") }
            directory = String(cString: created)
            address = (directory ?? "") + "/notify"
            bytes = Array(address.utf8) + [0]
        }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw POSIXFailure(operation: "bind \(address)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        if let directory {
            unlink(address)
            rmdir(directory)
        }
    }

    /// The next datagram, or `nil` after five seconds without one.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// Whether a datagram is waiting, without waiting for one.
    func hasPending() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }
}

struct POSIXFailure: Error, CustomStringConvertible {
    let operation: String
    let code: Int32

    init(operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}

@Suite struct SystemdNotifierTests {
    let listener: NotifyListener
    let notifier: SystemdNotifier

    init() throws {
        listener = try NotifyListener()
        notifier = SystemdNotifier(notifySocket: listener.address, watchdogInterval: nil)
    }

    @Test func readySendsReady() throws {
        try notifier.ready()
        #expect(listener.receive() == "READY=1")
        try notifier.ready(status: "3 scenes")
        #expect(listener.receive() == "READY=1\nSTATUS=3 scenes")
    }

    /// The byte-level pass for ASCII gives what the character-level one gives, `\r\n` and the cut included.
    @Test(arguments: [
        "a\r\nb", "\r\r\n\n\r", "\r", "x\u{7F}\u{1B}[0m", String(repeating: "x", count: 199) + "\r\nyz",
        String(repeating: "ab\r\n", count: 80), "", "tab\there", "é\r\nnot ASCII",
    ])
    func asciiStatusLinesAreCutAndFlattenedAsCharactersAre(_ text: String) {
        #expect(SystemdNotifier.oneLine(text) == SystemdNotifier.oneLine(characters: text))
    }

    @Test func statusIsOneShortLine() throws {
        #expect(notifier.isEnabled)
        try notifier.status("3 scenes, revision 42")
        #expect(listener.receive() == "STATUS=3 scenes, revision 42")
        try notifier.status("first\nsecond\r\nthird\u{0}")
        #expect(listener.receive() == "STATUS=first second third ")  // "\r\n" is one Character
        try notifier.status(String(repeating: "x", count: 1000))
        #expect(listener.receive() == "STATUS=" + String(repeating: "x", count: SystemdNotifier.maximumStatusLength))
    }

    @Test func reloadingCarriesTheMonotonicClockInTheSameDatagram() throws {
        let before = SystemdNotifier.monotonicMicroseconds()
        try notifier.reloading()
        let after = SystemdNotifier.monotonicMicroseconds()
        let message = try #require(listener.receive())
        let lines = message.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first == "RELOADING=1")
        let stamp = try #require(lines.last)
        #expect(stamp.hasPrefix("MONOTONIC_USEC="))
        let value = try #require(UInt64(stamp.dropFirst("MONOTONIC_USEC=".count)))
        #expect(value >= before && value <= after)
        // And it is CLOCK_MONOTONIC itself, not some other clock that happens to be in range.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        #expect(nowMicroseconds >= value && nowMicroseconds - value < 5_000_000)
        #expect(!listener.hasPending())
    }

    @Test func readyAfterReload() throws {
        try notifier.readyAfterReload(status: "reloaded")
        #expect(listener.receive() == "READY=1\nSTATUS=reloaded")
        try notifier.readyAfterReload()
        #expect(listener.receive() == "READY=1")
    }

    @Test func stoppingAndWatchdog() throws {
        try notifier.stopping()
        #expect(listener.receive() == "STOPPING=1")
        try notifier.watchdogPing()
        #expect(listener.receive() == "WATCHDOG=1")
    }

    @Test func extendTimeoutInMicroseconds() throws {
        try notifier.extendTimeout(.seconds(90))
        #expect(listener.receive() == "EXTEND_TIMEOUT_USEC=90000000")
        try notifier.extendTimeout(.milliseconds(1500))
        #expect(listener.receive() == "EXTEND_TIMEOUT_USEC=1500000")
        try notifier.extendTimeout(.nanoseconds(2_999))
        #expect(listener.receive() == "EXTEND_TIMEOUT_USEC=2")
        try notifier.extendTimeout(.seconds(-1))
        #expect(listener.receive() == "EXTEND_TIMEOUT_USEC=0")
        #expect(SystemdNotifier.microseconds(.seconds(Int64.max)) == UInt64.max)
    }

    @Test func abstractNamespaceSocket() throws {
        let abstract = try NotifyListener(abstract: true)
        #expect(abstract.address.hasPrefix("@"))
        let notifier = SystemdNotifier(notifySocket: abstract.address, watchdogInterval: nil)
        try notifier.ready()
        #expect(abstract.receive() == "READY=1")
        try notifier.watchdogPing()
        #expect(abstract.receive() == "WATCHDOG=1")
    }

    @Test func disabledWithoutSocket() throws {
        for address in [nil, ""] as [String?] {
            let notifier = SystemdNotifier(notifySocket: address, watchdogInterval: nil)
            #expect(!notifier.isEnabled)
            try notifier.ready()
            try notifier.reloading()
            try notifier.status("ignored")
        }
    }

    /// libsystemd, which sends to forms this code does not know, reads `NOTIFY_SOCKET` from the process environment;
    /// a notifier given another address must not have its messages go there instead.
    @Test func anUnknownAddressIsNotHandedToLibsystemdForAnotherSocket() {
        let address = "scenesync-test-unknown-form"
        #expect(getenv("NOTIFY_SOCKET").map { String(cString: $0) } != address)
        let notifier = SystemdNotifier(notifySocket: address, watchdogInterval: nil)
        #expect(throws: SystemdNotifyError(operation: "NOTIFY_SOCKET \(address)", errno: EAFNOSUPPORT)) {
            try notifier.ready()
        }
    }

    @Test func unreachableSocketIsReported() {
        let notifier = SystemdNotifier(notifySocket: listener.address + ".missing", watchdogInterval: nil)
        #expect(throws: SystemdNotifyError.self) { try notifier.ready() }
        do {
            try notifier.ready()
        } catch {
            #expect(error.errno == ENOENT)
            #expect(error.description.contains(".missing"))
        }
    }
}
