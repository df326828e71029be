import Foundation
import Testing

/// The per-user units as the package installs them, run by an ordinary user's own systemd instance in a container
/// (booted straight into the test unit, so the script starts D-Bus, logind and `user@UID.service` itself).
///
/// The user's socket listens at login because the package enables it for every user; an app of that user writes a
/// scene file, and `scenesync watch` run by the same user, with no options, sees the change. `systemctl --user
/// reload` returns only after the daemon reloaded, and `systemctl --user stop` writes the final snapshot into
/// `~/.local/state/scenesync` while the scene files stay.
@Suite struct PackageUserServiceTests {
    static let uid = 1500

    /// Run before the package is installed, so that the purge check does not count the user's own files.
    static let createUser = """
        useradd --create-home --uid \(uid) --user-group --shell /bin/sh alice

        """

    /// The user half of ``PackageBoot``'s script, once the system daemon stopped.
    static let userChecks = """
        systemctl start dbus.service systemd-logind.service
        systemctl start user@\(uid).service
        say "user-manager: $(systemctl is-active user@\(uid).service)"
        runtime=/run/user/\(uid)
        alice() {
            setpriv --reuid=\(uid) --regid=\(uid) --init-groups \\
                env HOME=/home/alice USER=alice LOGNAME=alice XDG_RUNTIME_DIR=$runtime "$@"
        }
        say "user-socket: $(alice systemctl --user is-enabled scenesyncd.socket) \\
        $(alice systemctl --user is-active scenesyncd.socket)"
        # Started with the session, before anything connected: the restore is done when the user's apps start. The
        # manager may still be starting it (activating, until its READY=1); nothing here connects meanwhile.
        for i in $(seq 1 600); do
            [ "$(alice systemctl --user is-active scenesyncd.service)" = activating ] || break
            sleep 0.05
        done
        say "user-service-at-login: $(alice systemctl --user is-enabled scenesyncd.service) \\
        $(alice systemctl --user is-active scenesyncd.service)"
        stat -c 'socket: %a %U %F %n' $runtime/scenesync/scenesync.sock
        alice scenesync watch > /run/watch.log 2>&1 &
        watcher=$!
        await 'synced at' /run/watch.log && say watch-synced
        say "service: $(alice systemctl --user is-active scenesyncd.service)"
        # An app of the user writes its scene file atomically.
        alice sh -c 'd=$XDG_RUNTIME_DIR/scenesync/scenes
            printf "[\\"Swift.Int\\",\\"42\\"]" > "$d/.main.tmp" && mv "$d/.main.tmp" "$d/main.json"'
        await 'change main v1' /run/watch.log && say watch-saw-the-file
        alice scenesync status > /run/status 2>&1
        say "status-exit: $?"
        alice systemctl --user reload scenesyncd.service
        say "RELOAD-RETURNED $?"
        kill $watcher
        wait $watcher
        alice systemctl --user stop scenesyncd.service
        say "stopped: $(alice systemctl --user show -p Result --value scenesyncd.service)"
        state=/home/alice/.local/state/scenesync
        stat -c 'state: %a %U %n' $state
        grep -l '"reason":"shutdown"' $state/snapshots/snapshot-*.json | sed 's/^/shutdown-snapshot: /'
        test -f $runtime/scenesync/scenes/main.json && say scenes-survive-stop
        test -S $runtime/scenesync/scenesync.sock && say socket-survives-stop
        find /home/alice/.config -name 'snapshot-*' 2>/dev/null | sed 's/^/config-snapshot: /'
        sed 's/^/watch: /' /run/watch.log
        systemctl stop user@\(uid).service
        # What a reboot does to the session: /run/user/UID is a fresh tmpfs at the next login.
        systemctl stop user-runtime-dir@\(uid).service
        test -e $runtime/scenesync/scenes/main.json || say runtime-cleared
        systemctl start user@\(uid).service
        # Nothing connects: the scene file is back because the service started with the session and restored it.
        for i in $(seq 1 600); do
            [ "$(alice systemctl --user is-active scenesyncd.service)" = activating ] || break
            sleep 0.05
        done
        say "scenes-back-at-login: $(cat $runtime/scenesync/scenes/main.json 2>&1)"
        systemctl stop user@\(uid).service

        """

    @Test func userManagerRunsThePackagedUserUnits() async throws {
        let outcome = try await PackageBoot.outcome()
        let report = PackageBoot.report(outcome)
        let output = outcome.output
        #expect(outcome.exitStatus == 0, "\(report)")
        #expect(output.contains("user-manager: active"), "\(report)")
        #expect(output.contains("user-socket: enabled active"), "\(report)")
        #expect(output.contains("user-service-at-login: enabled active"), "\(report)")
        #expect(output.contains("socket: 600 alice socket /run/user/\(Self.uid)/scenesync/scenesync.sock"), "\(report)")
        #expect(output.contains("watch-synced"), "\(report)")
        #expect(output.contains("service: active"), "\(report)")
        #expect(output.contains("watch-saw-the-file"), "\(report)")
        #expect(output.contains("watch: r1 change main v1 [Swift.Int 42] (file)"), "\(report)")
        #expect(output.contains("status-exit: 0"), "\(report)")
        #expect(output.contains("RELOAD-RETURNED 0"), "\(report)")
        #expect(output.contains("stopped: success"), "\(report)")
        #expect(output.contains("state: 750 alice /home/alice/.local/state/scenesync"), "\(report)")
        #expect(
            output.contains("shutdown-snapshot: /home/alice/.local/state/scenesync/snapshots/snapshot-"), "\(report)")
        #expect(output.contains("scenes-survive-stop"), "\(report)")
        #expect(output.contains("socket-survives-stop"), "\(report)")
        // Nothing of the daemon's state under ~/.config, where systemd 252 puts a user unit's StateDirectory=.
        #expect(!output.contains("config-snapshot: "), "\(report)")
        // After the "reboot", the user's scene file is back before any app or client connects.
        #expect(output.contains("runtime-cleared"), "\(report)")
        #expect(output.contains(#"scenes-back-at-login: ["Swift.Int","42"]"#), "\(report)")
        // The reload returned only after the daemon had reloaded.
        let reloaded = SystemdEndToEndTests.position(of: "configuration reloaded", in: outcome.journal)
        let returned = SystemdEndToEndTests.position(of: "RELOAD-RETURNED", in: outcome.journal)
        #expect(SystemdEndToEndTests.isOrdered(reloaded, before: returned), "reload waits\n\(report)")
    }
}
