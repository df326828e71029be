import Glibc
import Testing

@testable import SceneSyncDaemon

/// Everything that reads what systemd puts in the process environment: `NOTIFY_SOCKET`, `WATCHDOG_USEC` and
/// `WATCHDOG_PID`, `LISTEN_FDS` and friends, `JOURNAL_STREAM`. libsystemd reads the real environment, so these
/// tests set it; they run one at a time and put every variable back as it was.
@Suite(.serialized) struct SystemdEnvironmentTests {
    @Test func notifierFromTheEnvironment() throws {
        let listener = try NotifyListener()
        try withEnvironment(["NOTIFY_SOCKET": listener.address]) {
            let notifier = SystemdNotifier()
            #expect(notifier.isEnabled)
            try notifier.ready()
        }
        #expect(listener.receive() == "READY=1")
        withEnvironment(["NOTIFY_SOCKET": nil]) {
            #expect(!SystemdNotifier().isEnabled)
        }
    }

    @Test func notifierFromAnAbstractNotifySocket() throws {
        let listener = try NotifyListener(abstract: true)
        try withEnvironment(["NOTIFY_SOCKET": listener.address]) {
            try SystemdNotifier().stopping()
        }
        #expect(listener.receive() == "STOPPING=1")
    }

    @Test func noWatchdogWithoutWatchdogUsec() {
        withEnvironment(["WATCHDOG_USEC": nil, "WATCHDOG_PID": nil]) {
            #expect(SystemdNotifier().watchdogInterval == nil)
        }
    }

    @Test func watchdogForThisProcess() {
        withEnvironment(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "\(getpid())"]) {
            #expect(SystemdNotifier().watchdogInterval == .seconds(2))
        }
        // Without WATCHDOG_PID the setting is meant for whoever reads it.
        withEnvironment(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": nil]) {
            #expect(SystemdNotifier().watchdogInterval == .seconds(2))
        }
    }

    @Test func noWatchdogForAnotherProcess() {
        let other = getpid() == 1 ? 2 : 1
        withEnvironment(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "\(other)"]) {
            #expect(SystemdNotifier().watchdogInterval == nil)
        }
    }

    @Test func noSocketsWithoutListenFds() throws {
        try withEnvironment(["LISTEN_FDS": nil, "LISTEN_PID": nil, "LISTEN_FDNAMES": nil]) {
            #expect(SocketActivation.inheritedSockets().isEmpty)
            let control = try SocketActivation.controlSocket()
            #expect(control == nil)
        }
    }

    @Test func noSocketsForAnotherProcess() throws {
        let other = getpid() == 1 ? 2 : 1
        try withEnvironment(["LISTEN_FDS": "1", "LISTEN_PID": "\(other)", "LISTEN_FDNAMES": "control"]) {
            #expect(SocketActivation.inheritedSockets().isEmpty)
            let control = try SocketActivation.controlSocket()
            #expect(control == nil)
        }
    }

    @Test func malformedListenFdsIsAnError() {
        withEnvironment(["LISTEN_FDS": "many", "LISTEN_PID": "\(getpid())", "LISTEN_FDNAMES": nil]) {
            #expect(throws: SocketActivationError.invalidEnvironment(errno: EINVAL)) {
                try SocketActivation.controlSocket()
            }
            #expect(SocketActivation.inheritedSockets().isEmpty)
        }
    }

    @Test func journaldPrefixesWhenJournalStreamIsSet() {
        #expect(StderrLogHandler.isJournald(environment: ["JOURNAL_STREAM": "8:12345"]))
        #expect(!StderrLogHandler.isJournald(environment: [:]))
        #expect(!StderrLogHandler.isJournald(environment: ["JOURNAL_STREAM": ""]))
        #expect(StderrLogHandler(label: "t", following: LogLevel(), journald: true).journald)
        #expect(!StderrLogHandler(label: "t", following: LogLevel(), journald: false).journald)
        // A handler made without a decision follows this process's own JOURNAL_STREAM.
        let stream = getenv("JOURNAL_STREAM").map { ["JOURNAL_STREAM": String(cString: $0)] } ?? [:]
        #expect(StderrLogHandler(label: "t").journald == StderrLogHandler.isJournald(environment: stream))
    }
}

/// Runs `body` with the given variables set (`nil`: unset), then restores their previous values.
func withEnvironment<T>(_ values: [String: String?], _ body: () throws -> T) rethrows -> T {
    let saved = values.keys.map { name in (name, getenv(name).map { String(cString: $0) }) }
    func apply(_ name: String, _ value: String?) {
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    for (name, value) in values { apply(name, value) }
    defer { for (name, value) in saved { apply(name, value) } }
    return try body()
}
