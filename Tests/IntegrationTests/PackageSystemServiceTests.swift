import Foundation
import Testing

/// The `.deb` on a real Debian system (``PackageBoot``). Installing it enables the system socket without starting it;
/// once started, root uses the socket-activated daemon with the installed CLI, and the metrics timer's service
/// writes its file; purging removes everything but dpkg's own records.
@Suite struct PackageSystemServiceTests {
    /// Where the machines see the package.
    static let machineDeb = "/nspawn-pkg/scenesync.deb"

    /// A container of this machine in which the package can be installed, and proves it needs no Swift toolchain.
    static func machine(deb: URL) -> NspawnMachine {
        NspawnMachine(
            binds: [.init(deb.path, at: machineDeb)], timeout: .seconds(360), root: .hostOverlay(hiding: ["/opt"]))
    }

    /// Shell helpers for the scripts: `say` (output and journal), `await PATTERN FILE` (waits up to 30 s for a
    /// line to appear, checking every 50 ms); then what makes the overlay of this machine a fresh one: no man-db
    /// index rebuild on every dpkg run, no policy-rc.d, and no scenesync state from the host.
    static let prelude = """
        set -u
        say() { echo "$@"; systemd-cat -t pkgtest echo "$@"; }
        await() {
            for i in $(seq 1 600); do grep -q -- "$1" "$2" 2>/dev/null && return 0; sleep 0.05; done
            echo "timed out waiting for '$1' in $2"; return 1
        }
        rm -f /var/lib/man-db/auto-update
        # This machine is a container image whose policy-rc.d forbids maintainer scripts to start or stop
        # services; a real system has none.
        rm -f /usr/sbin/policy-rc.d
        # Nor has a fresh machine the state of a daemon run on this one as root (`make run` uses the system paths).
        # Left in /var/lib/scenesync it would fail every start here: systemd moves it into /var/lib/private for the
        # dynamic user, and an overlay cannot rename a directory of its lower layer (EXDEV).
        rm -rf /var/lib/scenesync /var/lib/private/scenesync /etc/scenesync /run/scenesync /run/scenesync.sock
        test -e /opt/swift && say swift-toolchain-visible

        """

    /// The system half of ``PackageBoot``'s script, after `dpkg -i`: root uses the socket-activated daemon, the
    /// metrics timer's service writes node_exporter's textfile, and the daemon stops with its final snapshot.
    static let systemChecks = """
        say "system-socket: $(systemctl is-enabled scenesyncd.socket) $(systemctl is-active scenesyncd.socket)"
        say "user-socket: $(systemctl --global is-enabled scenesyncd.socket)"
        say "user-service: $(systemctl --global is-enabled scenesyncd.service)"
        systemctl start scenesyncd.socket
        say "socket-started: $(systemctl is-active scenesyncd.socket) $(systemctl is-active scenesyncd.service)"
        # The first connection starts the daemon; the installed CLI finds root's socket without options.
        scenesync status > /run/status 2>&1
        say "status-exit: $?"
        sed 's/^/status: /' /run/status
        say "after-connect: $(systemctl is-active scenesyncd.service)"
        scenesync push main '"x"' --type Swift.String | sed 's/^/push: /'
        sed 's/^/file: /' /run/scenesync/scenes/main.json; echo
        systemctl reload scenesyncd.service
        say "reload-exit: $?"
        # node_exporter's textfile directory, as Debian's prometheus-node-exporter makes it: the timer's service
        # runs only where it exists.
        mkdir -p /var/lib/prometheus/node-exporter
        systemctl start scenesync-metrics.service
        say "metrics-exit: $? $(systemctl show -p Result --value scenesync-metrics.service)"
        sed -n 's/^\\(scenesync_[a-z_]*\\) .*/metrics-file: \\1/p' /var/lib/prometheus/node-exporter/scenesync.prom
        rm -rf /var/lib/prometheus
        systemctl stop scenesyncd.service
        grep -l '"reason":"shutdown"' /var/lib/scenesync/snapshots/snapshot-*.json | sed 's/^/shutdown-snapshot: /'
        say "man: $(man -w scenesyncd) $(man -w scenesync)"

        """

    @Test func installUseAndPurgeTheSystemService() async throws {
        let outcome = try await PackageBoot.outcome()
        let report = PackageBoot.report(outcome)
        let output = outcome.output
        #expect(outcome.exitStatus == 0, "\(report)")
        #expect(!output.contains("swift-toolchain-visible"), "the container must not see /opt\n\(report)")
        #expect(output.contains("install-status: 0"), "\(report)")
        // Enabled for the next boot, not started; the per-user service and socket enabled for every user.
        #expect(output.contains("system-socket: enabled inactive"), "\(report)")
        #expect(output.contains("user-socket: enabled"), "\(report)")
        #expect(output.contains("user-service: enabled"), "\(report)")
        #expect(output.contains("socket-started: active inactive"), "\(report)")
        #expect(output.contains("status-exit: 0"), "\(report)")
        #expect(output.contains("after-connect: active"), "\(report)")
        #expect(output.contains("push: "), "\(report)")
        #expect(output.contains(#"file: ["Swift.String","\"x\""]"#), "\(report)")
        #expect(output.contains("reload-exit: 0"), "\(report)")
        #expect(output.contains("shutdown-snapshot: /var/lib/scenesync/snapshots/snapshot-"), "\(report)")
        #expect(
            output.contains("man: /usr/share/man/man8/scenesyncd.8.gz /usr/share/man/man1/scenesync.1.gz"), "\(report)")
        #expect(output.contains("purge-status: 0"), "\(report)")
        #expect(output.contains("purge-checked"), "\(report)")
        let leftovers = output.split(separator: "\n").filter { $0.hasPrefix("leftover: ") }
        #expect(leftovers.isEmpty, "the purge left these behind:\n\(leftovers.joined(separator: "\n"))\n\(report)")
    }

    /// With node_exporter's textfile directory present, the timer's service writes the daemon's metrics there. Its
    /// seccomp filter once killed the CLI (`Bad system call`) on every run, so no file was ever written.
    @Test func metricsServiceWritesTheTextfile() async throws {
        let outcome = try await PackageBoot.outcome()
        let report = PackageBoot.report(outcome)
        #expect(outcome.output.contains("metrics-exit: 0 success"), "\(report)")
        #expect(outcome.output.contains("metrics-file: scenesync_scenes"), "\(report)")
        #expect(outcome.output.contains("metrics-file: scenesync_events_delivered_total"), "\(report)")
        #expect(!outcome.journal.contains("Bad system call"), "\(report)")
    }
}
