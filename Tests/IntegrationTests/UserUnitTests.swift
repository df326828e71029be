import Foundation
import SceneSyncCore
import Testing

/// `systemd/user/scenesyncd.service` and `.socket`, the per-user units: systemd's own check, and the paths they give
/// the daemon, which must be the ones the daemon and the CLI use by default for a user other than root.
@Suite struct UserUnitTests {
    static let unitDirectory = BuiltProducts.packageRoot.appendingPathComponent("systemd/user")

    static func text(_ name: String) throws -> String {
        try String(contentsOf: unitDirectory.appendingPathComponent(name), encoding: .utf8)
    }

    /// The settings of a unit, in order, without comments.
    static func settings(_ name: String) throws -> [String] {
        try text(name).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && $0.contains("=") }
    }

    static func values(_ key: String, in settings: [String]) -> [String] {
        settings.filter { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    @Test func unitsPassUserVerifyWithoutAnyOutput() async throws {
        let analyze = try SystemdUnitTests.analyze()
        let directory = try TemporaryDirectory("uunit")
        defer { directory.remove() }
        // A user manager needs a runtime directory even to verify.
        let runtime = directory.appending("runtime")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        var units: [String] = []
        for name in ["scenesyncd.socket", "scenesyncd.service"] {
            let copy = directory.appending(name)
            try SystemdUnitTests.pointCommandsAtBuiltProducts(try Self.text(name))
                .write(to: copy, atomically: true, encoding: .utf8)
            units.append(copy.path)
        }
        let env = try #require(HostCommand.find("env"), "env not found")
        let result = try await HostCommand.run(
            env, ["XDG_RUNTIME_DIR=\(runtime.path)", analyze, "--user", "verify", "--man=no"] + units,
            in: directory.url)
        #expect(result.output == "", "systemd-analyze --user verify said:\n\(result.output)")
        #expect(result.status == 0)
    }

    /// The user manager's specifiers for a user with this home and runtime directory (no `XDG_CONFIG_HOME`).
    static func expand(_ value: String, home: String, runtime: String) -> String {
        value.replacingOccurrences(of: "%t", with: runtime).replacingOccurrences(of: "%h", with: home)
            .replacingOccurrences(of: "%E", with: home + "/.config")
    }

    @Test func unitPathsAreTheDefaultsOfANonRootUser() throws {
        let home = "/home/alice"
        let runtime = "/run/user/1000"
        let service = try Self.settings("scenesyncd.service")
        let socket = try Self.settings("scenesyncd.socket")

        // What the daemon gets under this unit: RuntimeDirectory= sets RUNTIME_DIRECTORY, Environment= the others.
        var environment = ["HOME": home, "XDG_RUNTIME_DIR": runtime]
        for runtimeDirectory in Self.values("RuntimeDirectory", in: service) {
            environment["RUNTIME_DIRECTORY"] = runtime + "/" + runtimeDirectory
        }
        for assignment in Self.values("Environment", in: service) {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            try #require(parts.count == 2, "Environment=\(assignment)")
            environment[parts[0]] = Self.expand(parts[1], home: home, runtime: runtime)
        }
        let underSystemd = PlatformDefaults.resolve(environment: environment, uid: 1000)
        // What the CLI (and the daemon started by hand) use in that user's session.
        let inSession = PlatformDefaults.resolve(environment: ["HOME": home, "XDG_RUNTIME_DIR": runtime], uid: 1000)
        #expect(underSystemd == inSession)
        #expect(inSession.stateDirectory == home + "/.local/state/scenesync")
        #expect(inSession.scenesDirectory == runtime + "/scenesync/scenes")
        #expect(inSession.configFile == home + "/.config/scenesync/scenesyncd.yaml")

        let listen = try #require(Self.values("ListenStream", in: socket).first, "no ListenStream=")
        #expect(Self.expand(listen, home: home, runtime: runtime) == inSession.socketPath)
        let reload = try #require(Self.values("ExecReload", in: service).first, "no ExecReload=")
        #expect(reload.hasSuffix(" --socket \(listen) reload"), "ExecReload=\(reload)")
        let writable = Self.values("ReadWritePaths", in: service).map { Self.expand($0, home: home, runtime: runtime) }
        #expect(writable == [inSession.stateDirectory])
        // systemd 252 puts a user unit's StateDirectory= and %S under ~/.config.
        #expect(!service.contains { $0.hasPrefix("StateDirectory=") || $0.contains("%S") })
    }

    @Test func unitsKeepTheContract() throws {
        let service = Set(try Self.settings("scenesyncd.service"))
        for setting in [
            "Type=notify", "NotifyAccess=main", "Restart=on-failure", "RuntimeDirectory=scenesync",
            "RuntimeDirectoryPreserve=yes", "Requires=scenesyncd.socket", "After=scenesyncd.socket",
            "ExecStart=/usr/local/sbin/scenesyncd", "RestrictAddressFamilies=AF_UNIX", "MemoryDenyWriteExecute=yes",
            "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=read-only", "PrivateUsers=yes",
        ] {
            #expect(service.contains(setting), "the user scenesyncd.service lacks \(setting)")
        }
        #expect(service.contains { $0.hasPrefix("WatchdogSec=") })
        let socket = Set(try Self.settings("scenesyncd.socket"))
        for setting in [
            "ListenStream=%t/scenesync/scenesync.sock", "FileDescriptorName=control", "SocketMode=0600",
            "Service=scenesyncd.service", "WantedBy=sockets.target",
        ] {
            #expect(socket.contains(setting), "the user scenesyncd.socket lacks \(setting)")
        }
    }
}
