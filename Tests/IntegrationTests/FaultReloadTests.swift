import Foundation
import SceneSyncCore
import Testing

/// A reload applies to connections that are already open (§8), not only to later ones.
@Suite struct FaultReloadTests {
    @Test func aSmallerLineLimitAppliesToAnOpenConnection() async throws {
        let daemon = try DaemonProcess(config: "log: {level: debug}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let open = try await daemon.connect()
        #expect(try await open.ok("hello").isOK)
        let line = #"{"id":1,"op":"hello","client":"\#(String(repeating: "c", count: 260))"}"#
        #expect(line.utf8.count > 280 && line.utf8.count < 320)

        try daemon.writeConfig("socket: {max_line_bytes: 200}\n")
        try await daemon.connect().ok("reload")
        try await open.send(raw: line + "\n")
        let answer = try await open.readMessage()
        #expect(answer.errorCode == "too_large", "a 300-byte line on an open connection: \(answer.text)")
        #expect(await open.isClosedByPeer())
    }

    @Test func aShorterHeartbeatAppliesToAnOpenSubscription() async throws {
        let daemon = try DaemonProcess(config: "socket: {heartbeat_s: 30}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let subscriber = try await daemon.connect()
        subscriber.skipsHeartbeats = false
        try await subscriber.subscribe()
        _ = try await subscriber.events(until: "synced")

        try daemon.writeConfig("socket: {heartbeat_s: 1}\n")
        try await ReloadTests.hangUp(daemon)
        // At 1 s, three heartbeats arrive well within 12 s; at the old 30 s, none would.
        subscriber.timeout = .seconds(12)
        var heartbeats = 0
        let deadline = ContinuousClock.now + .seconds(12)
        while heartbeats < 3, ContinuousClock.now < deadline {
            guard let event = try? await subscriber.nextEvent() else { break }
            if event.eventName == "heartbeat" { heartbeats += 1 }
        }
        #expect(heartbeats == 3, "\(heartbeats) heartbeats on the open subscription after heartbeat_s: 1")
    }
}
