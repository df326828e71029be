extension EngineCore {
    /// The engine's one entry point: every input, on the engine's loop, decided here and in the machines it asks.
    func handle(_ input: EngineInput) {
        loop.eventLoop.preconditionInEventLoop()
        switch input {
        case .newOutbox(let reply):
            reply(newOutbox())
        case .connectionOpened(let outbox, let credentials, let close, let reply):
            reply(register(outbox: outbox, credentials: credentials, close: close))
        case .requests(let requests, let connection, let outbox, let resume, let reply):
            reply(serve(requests, connection: connection, outbox: outbox, resume: resume))
        case .connectionClosed(let connection):
            unregister(connection: connection)
        case .catchUpChunk(let subscription, let reply):
            reply(nextCatchUpChunk(subscription: subscription))
        case .lagged(let subscription):
            resyncLagged(subscription: subscription)
        case .turnEnded:
            serveTurnEndBatches()
        case .attachWatcher(let watcher):
            attach(watcher)
        case .drainWatcher:
            drainWatcher()
        case .fileEvents(let events, let watcherJustDrained):
            take(events, watcherJustDrained: watcherJustDrained)
        case .revisionsReserved(let mark, let failure):
            reservationFinished(mark, failure: failure)
            endWork()
        case .commitFilesRead(let contents):
            resumeCommit(.filesRead(contents))
            endWork()
        case .commitFilesWritten(let files):
            resumeCommit(written(files))
            endWork()
        case .journalPersisted(.groupCommit):
            resumeCommit(.persisted)
            endWork()
        case .journalPersisted(.snapshot):
            encodeSnapshot()
            endWork()
        case .snapshotWritten(let result):
            snapshotWritten(result)
            endWork()
        case .syncCookieCreated(let cookie, let failure):
            syncCookieCreated(cookie, failure: failure)
            endWork()
        case .workDone(let completion):
            workDone(completion)
        case .timerFired(let body), .resumed(let body):
            body()
        case .tick(let heartbeat, let now, let done):
            tick(heartbeat: heartbeat, now: now)
            done.succeed()
        case .signal(let signal, let action):
            action.succeed(receive(signal))
        case .becomeReady(let actions):
            actions.succeed(becomeReady())
        case .triggerSnapshot(let reason):
            triggerSnapshot(reason: reason)
        case .settings(let settings):
            apply(settings)
        case .mergeDirectory(let scan, let merged):
            mergeDirectory(scan) { merged.succeed() }
        case .settle(let settled):
            settle { settled.succeed() }
        case .shutdown(let stopped):
            shutdown { stopped.succeed() }
        case .quiesce(let idle):
            quiesce { idle.succeed() }
        case .attachReplicator(let replicator):
            attach(replicator: replicator)
        case .reloadHandler(let handler):
            setReloadHandler(handler)
        case .statusHandler(let handler):
            setStatusHandler(handler)
        case .detachHandlers:
            detachHandlers()
        case .remoteBatch(let changes, let outcomes):
            applyRemote(changes) { outcomes.succeed($0) }
        case .clusterAvailable(let available, let reason):
            setClusterAvailable(available, reason: reason)
        case .clusterUnavailable(let message):
            setClusterUnavailable(message: message)
        }
    }
}
