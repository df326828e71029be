import Foundation
import SceneSyncCore
import Testing

/// What the real daemon tells systemd over `NOTIFY_SOCKET`, in order (§7).
@Suite struct NotifyProtocolTests {
    @Test func readyReloadAndStoppingInOrder() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let notify = try #require(daemon.notify)
        let ready = try #require(notify.messages.first { $0.contains("READY=1") })
        #expect(notify.messages.contains { $0.hasPrefix("STATUS=") }, "a status line before READY")
        _ = ready

        let client = try await daemon.connect()
        let reload = try await client.request("reload")
        #expect(reload.isOK, "\(reload)")
        let reloading = try #require(try await notify.waitFor("RELOADING=1"))
        // RELOADING=1 and MONOTONIC_USEC travel in one datagram; the value is this boot's monotonic clock.
        let usec = try #require(
            reloading.split(separator: "\n").first { $0.hasPrefix("MONOTONIC_USEC=") }
                .flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) })
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowUsec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        #expect(usec <= nowUsec && usec > 0)
        #expect(try await notify.waitFor("READY=1") != nil, "READY=1 again after the reload")

        daemon.signal(SIGHUP)
        #expect(try await notify.waitFor("RELOADING=1") != nil)
        #expect(try await notify.waitFor("READY=1") != nil)

        daemon.signal(SIGTERM)
        #expect(try await notify.waitFor("STOPPING=1") != nil)
        #expect(try await daemon.waitForExit() == 0)
        let order = notify.messages.compactMap { message -> String? in
            for key in ["RELOADING=1", "READY=1", "STOPPING=1"] where message.contains(key) { return key }
            return nil
        }
        #expect(order == ["READY=1", "RELOADING=1", "READY=1", "RELOADING=1", "READY=1", "STOPPING=1"])
    }

    /// A notification systemd never gets changes what it does (a start timed out, a service killed by the
    /// watchdog): each kind that fails is logged, once while it keeps failing.
    @Test func aNotificationThatCannotBeSentIsLoggedOnce() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        daemon.extraEnvironment["NOTIFY_SOCKET"] = daemon.root.appending("missing/notify.sock").path
        try await daemon.takeSlot()
        try daemon.launch()
        let failures = { daemon.stderrText.split(separator: "\n").filter { $0.contains("cannot notify systemd") } }
        // `ready` is logged right after READY=1 is sent, so its failure is in the log by then.
        #expect(await eventually(timeout: .seconds(30)) { daemon.stderrText.contains(": ready ") })
        #expect(failures().contains { $0.contains("READY=1") && $0.contains("missing/notify.sock") }, "\(failures())")

        let client = try await daemon.connect()
        for _ in 0..<2 { #expect(try await client.request("reload").isOK) }
        // The log's own thread writes each line, so the answer to a reload can come first: wait for the line.
        #expect(
            await eventually(timeout: .seconds(30)) { failures().contains { $0.contains("RELOADING=1") } },
            "\(failures())")
        #expect(failures().filter { $0.contains("READY=1") }.count == 1, "\(failures())")
        #expect(failures().filter { $0.contains("RELOADING=1") }.count == 1, "\(failures())")
        #expect(try await daemon.stop() == 0)
        #expect(failures().contains { $0.contains("STOPPING=1") }, "\(failures())")
    }

    @Test func statusFollowsChanges() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let notify = try #require(daemon.notify)
        try daemon.writeScene("one", "[1]")
        _ = try await daemon.connect().request("sync")
        #expect(try await notify.waitFor("STATUS=1 scenes, revision 1") != nil, "\(notify.messages)")
    }

    @Test func watchdogPingsAtHalfTheIntervalOnlyWhenAsked() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        // Without WATCHDOG_PID the interval is meant for any process, as sd_watchdog_enabled has it.
        daemon.extraEnvironment["WATCHDOG_USEC"] = "400000"
        try await daemon.start()
        let notify = try #require(daemon.notify)
        var pings = 0
        let deadline = ContinuousClock.now + .seconds(10)
        while pings < 4, ContinuousClock.now < deadline {
            if let message = try await notify.receive(timeout: .milliseconds(500)), message.contains("WATCHDOG=1") {
                pings += 1
            }
        }
        // At half of 400 ms, four pings arrive well within the 10 s guard; none would without the watchdog.
        #expect(pings == 4)

        let quiet = try DaemonProcess()
        defer { quiet.cleanup() }
        try await quiet.start()
        let quietNotify = try #require(quiet.notify)
        // A generous window: at the rate above it would hold several pings.
        _ = try await quietNotify.waitFor("WATCHDOG=1", timeout: .seconds(1))
        #expect(!quietNotify.messages.contains { $0.contains("WATCHDOG=1") })
    }

    /// The pings prove progress (§7): while the engine is stuck (the test hook `.scenesync-test-block-engine`
    /// blocks it until `.scenesync-test-hold-engine` is gone), none is sent, and they resume once it moves again.
    @Test func watchdogPingsStopWhileTheEngineIsStuck() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        daemon.extraEnvironment["WATCHDOG_USEC"] = "400000"
        try await daemon.start()
        let notify = try #require(daemon.notify)
        #expect(try await notify.waitFor("WATCHDOG=1", timeout: .seconds(10)) != nil, "no ping before the test")

        let hold = daemon.state.appendingPathComponent(".scenesync-test-hold-engine")
        try Data().write(to: hold)
        try Data().write(to: daemon.scenes.appendingPathComponent(".scenesync-test-block-engine"))
        // At one ping every 200 ms, two quiet seconds happen only if the pings stopped.
        var lastPing = ContinuousClock.now
        var quiet = false
        let deadline = ContinuousClock.now + .seconds(20)
        while !quiet, ContinuousClock.now < deadline {
            if let message = try await notify.receive(timeout: .milliseconds(250)), message.contains("WATCHDOG=1") {
                lastPing = .now
            }
            quiet = ContinuousClock.now - lastPing >= .seconds(2)
        }
        #expect(quiet, "the watchdog kept being pinged while the engine was stuck")
        try FileManager.default.removeItem(at: hold)
        #expect(try await notify.waitFor("WATCHDOG=1", timeout: .seconds(10)) != nil, "no ping once it moved again")
    }
}
