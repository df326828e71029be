import Foundation
import Testing

/// The shipped units under a real systemd (booted with `systemd-nspawn`): socket activation, readiness, reload,
/// the background-phase signal, status text and a clean stop with the final snapshot.
@Suite struct SystemdEndToEndTests {
    static let script = """
        set -eu
        say() { echo "$@"; systemd-cat -t e2e echo "$@"; }
        request() { printf '%s\\n' "$1" | socat -t 10 - UNIX-CONNECT:/run/scenesync.sock; }
        systemctl start scenesyncd.socket
        systemctl show -p ActiveState scenesyncd.service | sed 's/^/before-connect: /'
        # The first connection starts the service; the answer proves it serves the passed socket.
        request '{"id":1,"op":"hello","client":"e2e"}' | sed 's/^/hello: /'
        systemctl show -p ActiveState -p SubState scenesyncd.service | sed 's/^/after-connect: /'
        scenes=/run/scenesync/scenes
        printf '["Swift.Int","42","MyApp.Recipe","{\\\\"applePie\\\\":{}}"]' > "$scenes/.main.tmp"
        mv "$scenes/.main.tmp" "$scenes/main.json"
        request '{"id":2,"op":"sync"}' | sed 's/^/sync: /'
        request '{"id":3,"op":"get","scene":"main"}' | sed 's/^/get: /'
        systemctl reload scenesyncd.service
        say RELOAD-RETURNED
        systemctl kill -s SIGUSR1 --kill-whom=main scenesyncd.service
        for i in $(seq 1 200); do
            ls /var/lib/scenesync/snapshots 2>/dev/null | grep -q '^snapshot-' && break
            sleep 0.05
        done
        grep -l '"reason":"signal"' /var/lib/scenesync/snapshots/snapshot-*.json | sed 's/^/signal-snapshot: /'
        systemctl show -p StatusText scenesyncd.service
        systemctl stop scenesyncd.service
        systemctl show -p Result -p ExecMainStatus -p ActiveState scenesyncd.service | sed 's/^/stopped: /'
        grep -l '"reason":"shutdown"' /var/lib/scenesync/snapshots/snapshot-*.json | sed 's/^/shutdown-snapshot: /'
        test -S /run/scenesync.sock && say socket-survives
        test -f "$scenes/main.json" && say scenes-survive
        # READY=1 comes only after the directory is merged: STATUS= is sent before READY=1 on the same socket, so
        # when `systemctl start` returns (it waits for READY=1) the status already counts a scene written while
        # the daemon was stopped.
        printf '[1,2,3]' > "$scenes/second.json"
        systemctl start scenesyncd.service
        systemctl show -p StatusText scenesyncd.service | sed 's/^/restarted: /'
        # A restart after the clean stop keeps the epoch.
        request '{"id":4,"op":"hello"}' | sed 's/^/hello-again: /'
        """

    @Test func socketActivatedServiceLifecycle() async throws {
        try await NspawnMachine.requireAvailable()
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let (socket, service) = try SystemdUnitTests.copies(
            in: directory, binDirectory: SystemdUnitTests.machineBinDirectory)
        let machine = NspawnMachine(units: [socket, service], binds: [SystemdUnitTests.machineBinBind])
        let outcome = try await machine.run(script: Self.script)
        let report =
            "output:\n\(outcome.output)\njournal:\n\(outcome.journal.suffix(6000))\nconsole:\n\(outcome.console)"
        #expect(outcome.exitStatus == 0, "\(report)")
        let output = outcome.output
        #expect(output.contains("before-connect: ActiveState=inactive"), "\(report)")
        #expect(output.contains(#"hello: {"id":1,"ok":true,"server":"scenesyncd""#), "\(report)")
        #expect(output.contains("after-connect: ActiveState=active"), "\(report)")
        #expect(output.contains(#""path":[{"type":"MyApp.Recipe","value":{"applePie":{}}}"#), "\(report)")
        #expect(output.contains("signal-snapshot: /var/lib/scenesync/snapshots/snapshot-"), "\(report)")
        #expect(output.contains("StatusText=1 scenes, revision"), "\(report)")
        #expect(output.contains("stopped: Result=success"), "\(report)")
        #expect(output.contains("stopped: ExecMainStatus=0"), "\(report)")
        #expect(output.contains("shutdown-snapshot: /var/lib/scenesync/snapshots/snapshot-"), "\(report)")
        #expect(output.contains("socket-survives"), "\(report)")
        #expect(output.contains("scenes-survive"), "\(report)")

        let firstEpoch = Self.epoch(after: "hello: ", in: output)
        let secondEpoch = Self.epoch(after: "hello-again: ", in: output)
        #expect(firstEpoch != nil && firstEpoch == secondEpoch, "a clean stop keeps the epoch\n\(report)")

        #expect(output.contains("restarted: StatusText=2 scenes, revision 2"), "\(report)")
        // `systemctl reload` returns only after the daemon reloaded: the daemon logs the reload before the script
        // logs its marker after systemctl returned.
        let journal = outcome.journal
        let reloaded = Self.position(of: "configuration reloaded", in: journal)
        let returned = Self.position(of: "RELOAD-RETURNED", in: journal)
        #expect(Self.isOrdered(reloaded, before: returned), "reload waits\n\(report)")
    }

    static func position(of text: String, in journal: String) -> String.Index? {
        journal.range(of: text)?.lowerBound
    }

    static func isOrdered(_ first: String.Index?, before second: String.Index?) -> Bool {
        guard let first, let second else { return false }
        return first < second
    }

    static func epoch(after prefix: String, in output: String) -> String? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
            let range = line.range(of: #""epoch":""#)
        else { return nil }
        return String(line[range.upperBound...].prefix(while: { $0 != "\"" }))
    }
}
