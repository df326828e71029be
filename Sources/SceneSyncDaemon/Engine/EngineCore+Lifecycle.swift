import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension EngineCore {
    /// Graceful shutdown: refuse further changes, tell every client, write the final snapshot and, only if it
    /// succeeded, the clean-shutdown marker that lets the next run keep this epoch; then calls `done`.
    func shutdown(then done: @escaping () -> Void) {
        // The last moment by which every change was merged, for the final snapshot's index: from here on, changes
        // are left to the next start.
        drainWatcher()
        guard lifecycle.beginDraining() else { return done() }
        logger.info("draining: no change is merged or broadcast any more", metadata: ["revision": "\(store.revision)"])
        // A group commit whose files are written is committed and answered; everything queued after it is refused.
        // Only then is the state final, and the shutdown event follows the answers.
        settle { [self] in
            announceShutdown()
            snapshot(reason: .shutdown) { [self] written in
                switch written {
                case .success(let written):
                    writeCleanShutdownMarker(revision: written.revision) { [self] in
                        stopped()
                        done()
                    }
                case .failure(let error):
                    logger.error(
                        "final snapshot failed; the next start begins a new epoch", metadata: ["error": "\(error)"])
                    stopped()
                    done()
                }
            }
        }
    }

    /// Writes the marker that lets the next start keep this epoch, the final snapshot having `revision`.
    private func writeCleanShutdownMarker(revision: UInt64, then done: @escaping () -> Void) {
        let stateDirectory = stateDirectory
        let marker = StateDirectory.CleanShutdown(epoch: store.epoch, revision: revision)
        offload { () -> SystemError? in
            do throws(SystemError) {
                try stateDirectory.writeCleanShutdownMarker(marker)
                return nil
            } catch {
                return error
            }
        } then: { [self] failure in
            if let failure {
                logger.error("cannot write the clean-shutdown marker", metadata: ["error": "\(failure)"])
            }
            done()
        }
    }

    /// The end of a shutdown: the last syncs answered, every connection's output closed.
    private func stopped() {
        answerSyncs(syncBarriers.answerAll())
        for connection in registry.connections.values { connection.outbox.close() }
        lifecycle.stop()
    }

    // MARK: - Life

    /// A signal arrived: what to do now (nothing while starting, where it is remembered for ``becomeReady()``).
    func receive(_ signal: DaemonSignal) -> DaemonLifecycle.Action? {
        let action = lifecycle.receive(signal)
        if action == nil, lifecycle.state == .starting {
            logger.notice("\(signal) arrived while starting; it is acted on once ready")
        }
        return action
    }

    /// The socket listens on a fully merged state: serve, and perform what signals asked for meanwhile.
    func becomeReady() -> [DaemonLifecycle.Action] {
        lifecycle.becomeReady()
    }

    /// Applies a reloaded configuration. Limits and the format policy take effect for the next change.
    func apply(_ newSettings: EngineSettings) {
        settings = newSettings
        store.codec = newSettings.codec
        store.resizeHistory(limit: newSettings.historyLimit)
        publishStatus()
    }

    func setReloadHandler(_ handler: @escaping @Sendable () async -> SceneSyncError?) {
        attachments.reloadHandler = handler
    }
}

extension EngineCore {
    /// Lets go of what the daemon attached (the reload and status handlers, the replicator): each holds the engine,
    /// so keeping them would keep a stopped engine alive, with its state-directory lock and its threads.
    func detachHandlers() {
        attachments.detach()
    }
}
