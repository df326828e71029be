import Glibc
import Testing

@testable import SceneSyncDaemon

/// Everything that reads what systemd puts in the environment: `NOTIFY_SOCKET`, `WATCHDOG_USEC` and
/// `WATCHDOG_PID`, `LISTEN_FDS` and friends, `JOURNAL_STREAM`. Each test passes the environment as a value: the
/// process environment is never changed, since other tests in this process spawn children and read it concurrently.
@Suite struct SystemdEnvironmentTests {
    typealias Inherited = SocketActivation.InheritedSocket

    /// A process ID that is not this one, for variables meant for another process.
    static let otherPID: pid_t = getpid() == 1 ? 2 : 1

    @Test func notifierFromTheEnvironment() throws {
        let listener = try NotifyListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address])
        #expect(notifier.isEnabled)
        try notifier.ready()
        #expect(listener.receive() == "READY=1")
        #expect(!SystemdNotifier(environment: [:]).isEnabled)
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled)
    }

    @Test func notifierFromAnAbstractNotifySocket() throws {
        let listener = try NotifyListener(abstract: true)
        try SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address]).stopping()
        #expect(listener.receive() == "STOPPING=1")
    }

    @Test func noWatchdogWithoutWatchdogUsec() {
        #expect(SystemdNotifier(environment: [:]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_PID": "\(getpid())"]).watchdogInterval == nil)
    }

    @Test func watchdogForThisProcess() {
        let environment = ["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "\(getpid())"]
        #expect(SystemdNotifier(environment: environment).watchdogInterval == .seconds(2))
        // Without WATCHDOG_PID the setting is meant for whoever reads it.
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "2000000"]).watchdogInterval == .seconds(2))
        let given = ["WATCHDOG_USEC": "1500", "WATCHDOG_PID": "4242"]
        #expect(SystemdNotifier.watchdogInterval(environment: given, pid: 4242) == .microseconds(1500))
    }

    @Test func noWatchdogForAnotherProcess() {
        let environment = ["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "\(Self.otherPID)"]
        #expect(SystemdNotifier(environment: environment).watchdogInterval == nil)
        let given = ["WATCHDOG_USEC": "1500", "WATCHDOG_PID": "4242"]
        #expect(SystemdNotifier.watchdogInterval(environment: given, pid: 4243) == nil)
    }

    /// `sd_watchdog_enabled` arms nothing for a value it cannot read, and neither does the notifier.
    @Test(arguments: [
        ["WATCHDOG_USEC": "0"],
        ["WATCHDOG_USEC": ""],
        ["WATCHDOG_USEC": "soon"],
        ["WATCHDOG_USEC": "-1"],
        ["WATCHDOG_USEC": "\(UInt64.max)"],
        ["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": ""],
        ["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "self"],
        ["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "0"],
    ])
    func noWatchdogForUnreadableSettings(environment: [String: String]) {
        #expect(SystemdNotifier.watchdogInterval(environment: environment, pid: 4242) == nil)
    }

    @Test func noSocketsWithoutListenFds() throws {
        for environment in [[:], ["LISTEN_PID": "\(getpid())"], ["LISTEN_FDS": "1", "LISTEN_FDNAMES": "control"]] {
            #expect(SocketActivation.inheritedSockets(environment: environment).isEmpty)
            let control = try SocketActivation.controlSocket(environment: environment)
            #expect(control == nil)
        }
    }

    @Test func noSocketsForAnotherProcess() throws {
        let environment = ["LISTEN_FDS": "1", "LISTEN_PID": "\(Self.otherPID)", "LISTEN_FDNAMES": "control"]
        #expect(SocketActivation.inheritedSockets(environment: environment).isEmpty)
        let control = try SocketActivation.controlSocket(environment: environment)
        #expect(control == nil)
    }

    /// Each is refused before any descriptor is touched, so this process's own descriptors 3 and up stay as they
    /// are.
    @Test(arguments: [
        ["LISTEN_FDS": "many"],
        ["LISTEN_FDS": ""],
        ["LISTEN_FDS": "0"],
        ["LISTEN_FDS": "-1"],
        ["LISTEN_FDS": "\(Int32.max)"],
        ["LISTEN_FDS": "1", "LISTEN_FDNAMES": "control:metrics"],
        ["LISTEN_FDS": "2", "LISTEN_FDNAMES": "control"],
    ])
    func malformedListenFdsIsAnError(variables: [String: String]) {
        let environment = variables.merging(["LISTEN_PID": "\(getpid())"]) { old, _ in old }
        #expect(throws: SocketActivationError.invalidEnvironment(errno: EINVAL)) {
            try SocketActivation.controlSocket(environment: environment)
        }
        #expect(SocketActivation.inheritedSockets(environment: environment).isEmpty)
    }

    @Test(arguments: ["", "self", "0", "-5"])
    func malformedListenPidIsAnError(listenPID: String) {
        let environment = ["LISTEN_PID": listenPID, "LISTEN_FDS": "1"]
        #expect(throws: SocketActivationError.invalidEnvironment(errno: EINVAL)) {
            try SocketActivation.controlSocket(environment: environment)
        }
    }

    @Test func passedDescriptorsStartAtThree() throws {
        let environment = ["LISTEN_PID": "4242", "LISTEN_FDS": "2"]
        let sockets = try SocketActivation.passedSockets(environment: environment, pid: 4242)
        #expect(sockets == [Inherited(fileDescriptor: 3, name: nil), Inherited(fileDescriptor: 4, name: nil)])
        #expect(try SocketActivation.passedSockets(environment: environment, pid: 4243).isEmpty)
    }

    @Test func namesLineUpWithTheirDescriptors() throws {
        let named = ["LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "metrics:control"]
        #expect(
            try SocketActivation.passedSockets(environment: named, pid: 4242) == [
                Inherited(fileDescriptor: 3, name: "metrics"), Inherited(fileDescriptor: 4, name: "control"),
            ])
        // An empty name keeps its place instead of shifting the next one onto the wrong descriptor.
        let gap = ["LISTEN_PID": "4242", "LISTEN_FDS": "3", "LISTEN_FDNAMES": ":control:"]
        #expect(
            try SocketActivation.passedSockets(environment: gap, pid: 4242) == [
                Inherited(fileDescriptor: 3, name: ""), Inherited(fileDescriptor: 4, name: "control"),
                Inherited(fileDescriptor: 5, name: ""),
            ])
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
