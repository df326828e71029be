import Foundation
import Testing

/// A throwaway systemd, booted with `systemd-nspawn` for one script, to try unit files under a real service manager
/// without touching the host's.
///
/// With the default ``Root/volatile`` root the container's root is a fresh tmpfs (`--volatile=yes`) with the host's
/// `/usr` mounted read-only, so it boots the host's own systemd and tools and forgets everything at power-off. It
/// sees nothing else of the host but what `binds` add, the Swift runtime the built binaries link against, and
/// `units` as `/etc/systemd/system`. ``Root/hostOverlay(hiding:)`` boots a writable copy of the whole host instead,
/// for installing packages.
///
/// `run(script:)` boots straight into a oneshot unit (`systemd.unit=` on the container's command line) that runs
/// the script, hands its output, exit status and the container's journal back through a bind-mounted directory,
/// and powers the machine off. A hard timeout stops a machine that hangs.
///
/// Tests call ``requireAvailable()`` first: where containers cannot be booted the test fails with the reason, or,
/// on a machine that was never meant to boot them (no root, no `systemd-nspawn`, outside CI), is cancelled with it.
struct NspawnMachine {
    struct Bind: Sendable {
        var source: String
        /// The path inside the container; the same as `source` unless given.
        var target: String
        var readOnly: Bool

        init(_ source: String, at target: String? = nil, readOnly: Bool = true) {
            self.source = source
            self.target = target ?? source
            self.readOnly = readOnly
        }

        /// The `systemd-nspawn` option.
        var argument: String { "\(readOnly ? "--bind-ro" : "--bind")=\(source):\(target)" }
    }

    struct Outcome: Sendable {
        /// The script's exit status; `nil` when it never finished.
        var exitStatus: Int32?
        /// The script's standard output and standard error.
        var output: String
        /// The container's whole journal at the end of the script (`journalctl -o short-precise`).
        var journal: String
        /// What `systemd-nspawn` itself printed: the container console, and the reason when booting failed.
        var console: String
        /// The machine was killed after the timeout.
        var timedOut: Bool
        /// `systemd-nspawn`'s own exit status.
        var nspawnStatus: Int32
    }

    /// What the container boots.
    enum Root: Sendable {
        /// A fresh tmpfs with the host's `/usr` read-only (`--volatile=yes`), the Swift runtime of this test process
        /// bound in, and `units` as the whole of `/etc/systemd/system`.
        case volatile
        /// The host's own root with a throwaway overlay on top (a tmpfs upper directory, mounted in a private mount
        /// namespace made with `unshare -m`), so that the container can write anywhere (`dpkg -i`) and the host
        /// sees none of it. `units` are added to its `/etc/systemd/system`; the directories in `hiding` are empty
        /// tmpfs mounts, and no Swift runtime is bound in. (nspawn refuses `--volatile=overlay` for `/`.) The
        /// overlay's upper directory, every change made to the root file system so far, is visible read-only at
        /// ``changesDirectory``.
        case hostOverlay(hiding: [String])
    }

    /// Unit files installed into the container's `/etc/systemd/system`, under their own names.
    var units: [URL] = []
    var binds: [Bind] = []
    /// How long a boot may take from start to power-off before the machine is killed.
    var timeout: Duration = .seconds(120)
    var root: Root = .volatile

    /// Where a ``Root/hostOverlay(hiding:)`` container sees its overlay's upper directory: files created or changed
    /// since it booted, and character devices (whiteouts) for files removed.
    static let changesDirectory = "/nspawn-changes"

    /// The unit that runs the script; it is the container's boot target.
    static let driverUnit = "nspawn-script.service"

    /// Boots, runs `script` with `/bin/sh` as root inside the container, powers off.
    ///
    /// A machine whose script never started (no output at all, and no timeout) is booted once more: on a loaded
    /// machine a container now and then stops before its boot reaches the script's unit, with nothing in its console
    /// but systemd-nspawn's own lines. The second outcome's console keeps the first one's, for the record.
    func run(script: String) async throws -> Outcome {
        let first = try await boot(script: script)
        guard first.exitStatus == nil, first.output.isEmpty, !first.timedOut else { return first }
        var second = try await boot(script: script)
        second.console =
            "first boot (the script never started, nspawn exit \(first.nspawnStatus)):\n"
            + first.console + "\nsecond boot:\n" + second.console
        return second
    }

    private func boot(script: String) async throws -> Outcome {
        let work = try TemporaryDirectory("nsp")
        defer { work.remove() }
        let fileManager = FileManager.default
        let unitDirectory = work.appending("units")
        let outDirectory = work.appending("out")
        try fileManager.createDirectory(at: unitDirectory, withIntermediateDirectories: false)
        try fileManager.createDirectory(at: outDirectory, withIntermediateDirectories: false)
        for unit in units {
            try fileManager.copyItem(at: unit, to: unitDirectory.appendingPathComponent(unit.lastPathComponent))
        }
        try Self.driverUnitText.write(
            to: unitDirectory.appendingPathComponent(Self.driverUnit), atomically: true, encoding: .utf8)
        try Self.driverScript.write(to: work.appending("driver.sh"), atomically: true, encoding: .utf8)
        try script.write(to: work.appending("script.sh"), atomically: true, encoding: .utf8)

        guard let nspawn = HostCommand.find("systemd-nspawn") else {
            throw NspawnError("systemd-nspawn not found (apt-get install systemd-container)")
        }
        var mounts = [
            Bind(work.path, at: "/nspawn"),
            Bind(outDirectory.path, at: "/nspawn-out", readOnly: false),
        ]
        let common = [
            "--register=no", "--keep-unit", "--console=pipe", "--private-network",
            "--machine=scenesync-\(UInt32.random(in: 0...UInt32.max))",
        ]
        let boot = ["--boot", "systemd.unit=\(Self.driverUnit)"]
        let result: HostCommand.Result
        switch root {
        case .volatile:
            mounts.append(Bind(unitDirectory.path, at: "/etc/systemd/system"))
            if let runtime = Self.swiftRuntimeDirectory { mounts.append(Bind(runtime)) }
            mounts += binds
            let arguments = ["--directory=/", "--volatile=yes"] + common + mounts.map(\.argument) + boot
            result = try await HostCommand.run(nspawn, arguments, timeout: timeout)
        case .hostOverlay(let hidden):
            guard let unshare = HostCommand.find("unshare") else {
                throw NspawnError("unshare not found (util-linux)")
            }
            let overlay = work.appending("overlay").path
            try fileManager.createDirectory(atPath: overlay, withIntermediateDirectories: false)
            mounts += binds
            mounts.append(Bind(overlay + "/upper", at: Self.changesDirectory))
            let arguments =
                ["--directory=\(overlay)/root"] + common + hidden.map { "--tmpfs=\($0)" } + mounts.map(\.argument)
                + boot
            let launcher = Self.overlayLauncher(
                overlay: overlay, units: unitDirectory.path, nspawn: [nspawn] + arguments)
            let launcherURL = work.appending("launch.sh")
            try launcher.write(to: launcherURL, atomically: true, encoding: .utf8)
            result = try await HostCommand.run(
                unshare, ["--mount", "--propagation", "private", "/bin/sh", launcherURL.path], timeout: timeout)
        }

        func read(_ name: String) -> String? {
            try? String(contentsOf: outDirectory.appendingPathComponent(name), encoding: .utf8)
        }
        return Outcome(
            exitStatus: read("status").flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) },
            output: read("output") ?? "",
            journal: read("journal") ?? "",
            console: result.output,
            timedOut: result.timedOut,
            nspawnStatus: result.status
        )
    }

    /// `nil` when containers can be booted here, otherwise `nspawn unavailable: <reason>`. Found out once per test
    /// run, by booting a machine that runs `true`.
    static func unavailableReason() async -> String? {
        await availability.value
    }

    /// Fails the calling test with the reason when containers cannot be booted on a machine that should boot them:
    /// under CI, or as root with `systemd-nspawn` installed. Elsewhere (no root, no nspawn) it cancels the test with
    /// the reason, so that a developer's run says what it left out.
    static func requireAvailable() async throws {
        guard let reason = await unavailableReason() else { return }
        if TestEnvironment.isCI || (geteuid() == 0 && HostCommand.find("systemd-nspawn") != nil) {
            throw NspawnError(reason)
        }
        try Test.cancel(Comment(rawValue: reason))
    }

    private static let availability = Task { () -> String? in
        guard HostCommand.find("systemd-nspawn") != nil else {
            return "nspawn unavailable: systemd-nspawn not found (apt-get install systemd-container)"
        }
        guard geteuid() == 0 else { return "nspawn unavailable: booting a container needs root" }
        // A loaded machine boots slowly: the probe gets as long as a test's own machine, and a second try.
        var reason = ""
        for _ in 1...2 {
            let probe: Outcome
            do {
                probe = try await NspawnMachine(timeout: .seconds(120)).run(script: "true")
            } catch {
                return "nspawn unavailable: \(error)"
            }
            if probe.exitStatus == 0 { return nil }
            let tail = probe.console.split(separator: "\n").suffix(5).joined(separator: " | ")
            let why = probe.timedOut ? "the probe machine did not power off within 120 s" : "the probe machine failed"
            reason = "nspawn unavailable: \(why): \(tail.isEmpty ? "no output" : tail)"
        }
        return reason
    }

    /// Where `libswiftCore.so` of this test process lives, the same runtime the built binaries link against; `nil`
    /// when it is under `/usr`, which the container shares anyway.
    static let swiftRuntimeDirectory: String? = {
        // Read to the end: /proc files report a size of 0, which whole-file readers take at its word.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps"),
            let maps = try? handle.readToEnd()
        else { return nil }
        try? handle.close()
        for line in String(decoding: maps, as: UTF8.self).split(separator: "\n") {
            guard let start = line.firstIndex(of: "/"), line.hasSuffix("/libswiftCore.so") else { continue }
            let directory = URL(fileURLWithPath: String(line[start...])).deletingLastPathComponent().path
            return directory.hasPrefix("/usr/") ? nil : directory
        }
        return nil
    }()

    /// Mounts the overlay of `/` (in the private mount namespace `unshare` made), adds the units, and replaces
    /// itself with `systemd-nspawn`. The tmpfs, and with it every change, goes when the namespace does.
    private static func overlayLauncher(overlay: String, units: String, nspawn: [String]) -> String {
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        return """
            set -eu
            cd /
            mount -t tmpfs -o mode=0755 scenesync-overlay \(quoted(overlay))
            mkdir \(quoted(overlay + "/upper")) \(quoted(overlay + "/work")) \(quoted(overlay + "/root"))
            mount -t overlay scenesync-overlay \
                -o lowerdir=/,upperdir=\(quoted(overlay + "/upper")),workdir=\(quoted(overlay + "/work")) \
                \(quoted(overlay + "/root"))
            cp \(quoted(units))/* \(quoted(overlay + "/root/etc/systemd/system/"))
            exec \(nspawn.map(quoted).joined(separator: " "))

            """
    }

    private static let driverUnitText = """
        [Unit]
        Description=NspawnMachine script
        SuccessAction=poweroff-force
        FailureAction=poweroff-force

        [Service]
        Type=oneshot
        ExecStart=/bin/sh /nspawn/driver.sh

        """

    private static let driverScript = """
        /bin/sh /nspawn/script.sh >/nspawn-out/output 2>&1
        echo $? >/nspawn-out/status
        journalctl --no-pager -o short-precise >/nspawn-out/journal 2>&1
        exit 0

        """
}

struct NspawnError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
