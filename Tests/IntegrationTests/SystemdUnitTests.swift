import Foundation
import Testing

/// `systemd/scenesyncd.service` and `systemd/scenesyncd.socket` as shipped, checked by systemd's own tools on copies
/// whose `ExecStart=`/`ExecReload=` point at the built binaries (systemd-analyze insists that they exist).
@Suite struct SystemdUnitTests {
    static let unitDirectory = BuiltProducts.packageRoot.appendingPathComponent("systemd")
    static let serviceName = "scenesyncd.service"
    static let socketName = "scenesyncd.socket"

    static func analyze() throws -> String {
        try #require(
            HostCommand.find("systemd-analyze"),
            "systemd-analyze not found: install the systemd package (scripts/install-deps.sh test, run by make test)"
        )
    }

    /// Where the nspawn machines see the built binaries. Not the build directory's own path: a clone under `/tmp`
    /// would be hidden from the service by its `PrivateTmp=`.
    static let machineBinDirectory = "/opt/scenesync-test/bin"

    /// Binds the built products at ``machineBinDirectory`` in an nspawn machine.
    static var machineBinBind: NspawnMachine.Bind { .init(BuiltProducts.directory.path, at: machineBinDirectory) }

    /// Both units copied into `directory` with the commands pointed at the built binaries (as seen from the host,
    /// or, with `binDirectory`, from inside a machine).
    static func copies(
        in directory: TemporaryDirectory, binDirectory: String = BuiltProducts.directory.path
    ) throws -> (socket: URL, service: URL) {
        for binary in [BuiltProducts.scenesyncd, BuiltProducts.scenesync] {
            try #require(
                FileManager.default.isExecutableFile(atPath: binary.path),
                "\(binary.path) is missing: run swift build first"
            )
        }
        let service = directory.appending(serviceName)
        let socket = directory.appending(socketName)
        let serviceText = try String(contentsOf: unitDirectory.appendingPathComponent(serviceName), encoding: .utf8)
        try pointCommandsAtBuiltProducts(serviceText, binDirectory: binDirectory)
            .write(to: service, atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(at: unitDirectory.appendingPathComponent(socketName), to: socket)
        return (socket, service)
    }

    /// Replaces the executable of every `ExecStart=`/`ExecReload=` line by the built binary of the same name,
    /// keeping systemd's prefixes (`!`, `+`, `-`, …) and the arguments.
    static func pointCommandsAtBuiltProducts(
        _ unit: String, binDirectory: String = BuiltProducts.directory.path
    ) -> String {
        let built = ["scenesyncd": binDirectory + "/scenesyncd", "scenesync": binDirectory + "/scenesync"]
        let lines = unit.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("ExecStart=") || line.hasPrefix("ExecReload="),
                let equals = line.firstIndex(of: "=")
            else { return String(line) }
            let value = line[line.index(after: equals)...]
            let prefix = value.prefix { "-@:+!|".contains($0) }
            let command = value.dropFirst(prefix.count)
            let executable = command.prefix { $0 != " " }
            let name = executable.split(separator: "/").last.map(String.init) ?? ""
            guard let replacement = built[name] else { return String(line) }
            return String(line[...equals]) + prefix + replacement + command.dropFirst(executable.count)
        }
        return lines.joined(separator: "\n")
    }

    @Test func shippedCommandsAreTheInstalledBinaries() async throws {
        let service = try String(
            contentsOf: Self.unitDirectory.appendingPathComponent(Self.serviceName), encoding: .utf8)
        let commands = service.split(separator: "\n").filter {
            $0.hasPrefix("ExecStart=") || $0.hasPrefix("ExecReload=")
        }
        #expect(commands == ["ExecStart=/usr/local/sbin/scenesyncd", "ExecReload=!/usr/local/bin/scenesync reload"])
        let rewritten = Self.pointCommandsAtBuiltProducts(service)
        #expect(rewritten.contains("\nExecStart=\(BuiltProducts.scenesyncd.path)\n"))
        #expect(rewritten.contains("\nExecReload=!\(BuiltProducts.scenesync.path) reload\n"))
    }

    @Test func unitsPassVerifyWithoutAnyOutput() async throws {
        let analyze = try Self.analyze()
        let directory = try TemporaryDirectory("unit")
        defer { directory.remove() }
        let (socket, service) = try Self.copies(in: directory)
        let result = try await HostCommand.run(
            analyze, ["verify", "--man=no", socket.path, service.path], in: directory.url)
        #expect(result.output == "", "systemd-analyze verify said:\n\(result.output)")
        #expect(result.status == 0)
    }

    @Test func serviceExposureIsTwoOrBetter() async throws {
        let analyze = try Self.analyze()
        let directory = try TemporaryDirectory("unit")
        defer { directory.remove() }
        let (_, service) = try Self.copies(in: directory)
        let result = try await HostCommand.run(
            analyze, ["security", "--offline=yes", "--no-pager", service.path], in: directory.url)
        let match = result.output.firstMatch(of: /Overall exposure level for [^:]+: ([0-9]+(?:\.[0-9]+)?)/)
        let exposure = try #require(
            match.flatMap { Double($0.1) },
            "no overall exposure in systemd-analyze security output:\n\(result.output)"
        )
        #expect(exposure <= 2.0, "exposure \(exposure):\n\(result.output)")
    }

    /// The settings the daemon and its documentation rely on; systemd-analyze accepts units without them.
    @Test func unitsKeepTheContract() async throws {
        func settings(_ name: String) throws -> Set<String> {
            let text = try String(contentsOf: Self.unitDirectory.appendingPathComponent(name), encoding: .utf8)
            return Set(text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && $0.contains("=") })
        }
        let service = try settings(Self.serviceName)
        for setting in [
            "Type=notify", "NotifyAccess=main", "Restart=on-failure", "StateDirectory=scenesync",
            "StateDirectoryMode=0750", "RuntimeDirectory=scenesync", "RuntimeDirectoryPreserve=yes",
            "ConfigurationDirectory=scenesync", "Requires=scenesyncd.socket", "After=scenesyncd.socket",
            "RestrictAddressFamilies=AF_UNIX", "MemoryDenyWriteExecute=yes", "ProcSubset=pid", "UMask=0027",
        ] {
            #expect(service.contains(setting), "\(Self.serviceName) lacks \(setting)")
        }
        #expect(service.contains { $0.hasPrefix("WatchdogSec=") })
        let socket = try settings(Self.socketName)
        for setting in [
            "ListenStream=/run/scenesync.sock", "FileDescriptorName=control", "SocketMode=0660",
            "Service=scenesyncd.service",
        ] {
            #expect(socket.contains(setting), "\(Self.socketName) lacks \(setting)")
        }
    }

    /// Under a real systemd: the socket unit creates the socket as documented, and the hardened sandbox of the
    /// service runs a Swift binary (`MemoryDenyWriteExecute=`, the system call filter, `ProcSubset=`…). The daemon
    /// itself is not started: its `--version` runs in a oneshot copy of the service.
    @Test func socketAndSandboxUnderSystemd() async throws {
        try await NspawnMachine.requireAvailable()
        let directory = try TemporaryDirectory("unit")
        defer { directory.remove() }
        let (socket, service) = try Self.copies(in: directory, binDirectory: Self.machineBinDirectory)
        let sandbox = directory.appending("scenesyncd-sandbox.service")
        let serviceText = try String(contentsOf: service, encoding: .utf8)
        let oneshot = serviceText.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            if line == "Type=notify" { return "Type=oneshot" }
            if line.hasPrefix("ExecStart=") { return line + " --version" }
            let dropped = ["Requires=", "After=", "ExecReload=", "Restart=", "WatchdogSec=", "Also="]
            return dropped.contains { line.hasPrefix($0) } ? nil : String(line)
        }
        try oneshot.joined(separator: "\n").write(to: sandbox, atomically: true, encoding: .utf8)

        let machine = NspawnMachine(
            units: [socket, service, sandbox],
            binds: [Self.machineBinBind]
        )
        let outcome = try await machine.run(
            script: """
                set -e
                systemctl start scenesyncd.socket
                stat -c '%a %U %G %F' /run/scenesync.sock
                systemctl show -p Listen -p FileDescriptorName scenesyncd.socket
                systemctl start scenesyncd-sandbox.service
                systemctl show -p Result -p ExecMainStatus scenesyncd-sandbox.service
                """
        )
        let report =
            "output:\n\(outcome.output)\njournal:\n\(outcome.journal.suffix(4000))\nconsole:\n\(outcome.console)"
        #expect(outcome.exitStatus == 0, "\(report)")
        #expect(outcome.output.contains("660 root root socket"), "\(report)")
        #expect(outcome.output.contains("Listen=/run/scenesync.sock (Stream)"), "\(report)")
        #expect(outcome.output.contains("FileDescriptorName=control"), "\(report)")
        #expect(outcome.output.contains("Result=success"), "\(report)")
        #expect(outcome.output.contains("ExecMainStatus=0"), "\(report)")
    }
}
