import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// `sync` cookies and other marker files in the scenes directory: acted on, answered and removed.
extension EngineCore {
    /// Answers the `sync`s waiting on `cookies` and removes their cookies, then calls `done`. A bulk step that reads
    /// files off the engine answers only those asked for before it began: one asked for meanwhile may follow an
    /// app's write that the step had already read past, whose event is merged after the step.
    func resumePendingSyncs(_ cookies: Set<String>, then done: @escaping () -> Void) {
        let answered = syncBarriers.answer(cookies)
        removeMarkers(answered.map { EngineCore.syncCookiePrefix + $0.cookie }) { [self] in
            answerSyncs(answered.flatMap(\.waiters))
            done()
        }
    }

    /// Answers `sync` waiters with the clock as it is now, each after the step that answers them.
    func answerSyncs(_ waiters: [(Clock) -> Void]) {
        let clock = store.clock
        for waiter in waiters { later { waiter(clock) } }
    }

    /// Acts on a marker file the watcher reported (a `sync` cookie, a test hook), then calls `done`.
    func handleMarker(_ name: String, then done: @escaping () -> Void) {
        if name.hasPrefix(EngineCore.syncCookiePrefix) {
            // While a rescan is owed, events before this cookie may have been lost with the overflow: its syncs
            // wait for the rescan, which answers every sync waiting when it begins. (Found by the simulation.)
            guard sceneFiles.rescanOwed == nil else { return removeMarkers([name], then: done) }
            let cookie = String(name.dropFirst(EngineCore.syncCookiePrefix.count))
            let waiters = syncBarriers.arrived(cookie)
            removeMarkers([name]) { [self] in
                answerSyncs(waiters)
                done()
            }
        } else if settings.testHooks, name == ".scenesync-test-overflow" {
            removeMarkers([name]) { [self] in rescan(reason: "an inotify queue overflow", then: done) }
        } else if settings.testHooks, name == EngineCore.blockEngineHook {
            // A stuck engine, on purpose: the engine's thread itself blocks while the hold file exists, as a
            // deadlock or a runaway loop would, so that a test sees the watchdog pings stop. The one blocking call
            // on the engine's thread, and the point of this hook.
            removeMarkers([name]) { [self] in
                EngineCore.waitWhileExists(stateDirectory.path + "/" + EngineCore.engineHoldHook)
                done()
            }
        } else {
            done()
        }
    }

    /// Removes marker files from the scenes directory, then calls `done`, before their barriers are answered:
    /// whoever waited finds the directory as the apps left it. The watcher ignores their removal; one already gone
    /// (the directory went away) is no error.
    func removeMarkers(_ names: [String], then done: @escaping () -> Void) {
        guard !names.isEmpty else { return done() }
        let paths = names.map { settings.scenesDirectory + "/" + $0 }
        offload({ for path in paths { _ = unlink(path) } }, then: { _ in done() })
    }

    static let syncCookiePrefix = ".scenesync-sync-"
}
