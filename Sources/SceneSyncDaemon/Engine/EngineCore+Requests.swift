import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension EngineCore {
    /// Serves a request that is answered in this turn. Returns the response line, or `nil` when the engine queued
    /// it itself (`subscribe`, whose response must precede its events in the same turn).
    func serveNow(_ request: Request, connection: UInt64) -> [UInt8]? {
        guard let context = registry.connections[connection] else { return nil }
        if let refusal = refusal(of: request, context: context) { return refusal }
        do throws(SceneSyncError) {
            return try respondNow(request, context: context)
        } catch {
            return ResponseWriter.error(id: request.id, error)
        }
    }

    /// Serves a request whose answer waits (``Command/isAnsweredLater``), queues the answer, then calls `done`.
    func serveLater(_ request: Request, connection: UInt64, outbox: Outbox, then done: @escaping () -> Void) {
        guard let context = registry.connections[connection] else { return done() }
        if let refusal = refusal(of: request, context: context) {
            outbox.enqueue(line: refusal)
            return done()
        }
        respondLater(request) { response in
            switch response {
            case .success(let line): outbox.enqueue(line: line)
            case .failure(let error): outbox.enqueue(line: ResponseWriter.error(id: request.id, error))
            }
            done()
        }
    }

    /// A change from a client that may not make it.
    private func refusal(of request: Request, context: SubscriptionRegistry.Connection) -> [UInt8]? {
        guard request.command.isChanging, !mayWrite(context.credentials) else { return nil }
        return ResponseWriter.error(id: request.id, Self.forbidden(context.credentials))
    }

    static func forbidden(_ credentials: PeerCredentials?) -> SceneSyncError {
        let who = credentials.map { "uid \($0.uid)" } ?? "an unidentified peer"
        return SceneSyncError(.forbidden, "\(who) may not change scenes (see access.write_uids and access.write_gids)")
    }

    private func respondNow(
        _ request: Request, context: SubscriptionRegistry.Connection
    ) throws(SceneSyncError) -> [UInt8]? {
        var response = ResponseWriter(id: request.id)
        switch request.command {
        case .hello(let client):
            setClientName(client, connection: context.id)
            response.append("server", string: "scenesyncd")
            response.append("version", string: SceneSyncVersion.current)
            response.append("protocol", int: 1)
            response.append("pid", int: Int(getpid()))
            response.appendClock(store.clock)
            // Where an app that writes files finds them (§6): the configured paths are absolute already.
            response.append("scenes_dir", string: settings.scenesDirectory)
        case .list:
            response.appendClock(store.clock)
            var scenes: [UInt8] = [UInt8(ascii: "[")]
            for (offset, scene) in store.scenes.enumerated() {
                if offset > 0 { scenes.append(UInt8(ascii: ",")) }
                scenes.append(literal: #"{"scene":"#)
                JSONWriter.appendString(scene.id.rawValue, to: &scenes)
                scenes.append(literal: #","version":"#)
                JSONWriter.appendUInt(scene.version, to: &scenes)
                scenes.append(literal: #","modified":"#)
                JSONWriter.appendUInt(scene.modified, to: &scenes)
                scenes.append(literal: #","depth":"#)
                JSONWriter.appendUInt(UInt64(scene.depth), to: &scenes)
                scenes.append(UInt8(ascii: "}"))
            }
            scenes.append(UInt8(ascii: "]"))
            response.append("scenes", json: scenes)
        case .get(let id):
            guard let scene = store.scene(id) else { throw SceneSyncError(.notFound, "no scene \(id)") }
            var members: [UInt8] = []
            Wire.appendSceneMembers(scene, to: &members)
            response.append(members: members)
            response.appendClock(store.clock)
        case .change:
            // Changes are served by the group commit, never one at a time.
            throw SceneSyncError(.internal, "a change reached the single-request path")
        case .subscribe(let patterns, let since, let initial):
            subscribe(connection: context.id, requestID: request.id, patterns: patterns, since: since, initial: initial)
            return nil
        case .unsubscribe(let subscription):
            guard unsubscribe(connection: context.id, subscription: subscription) else {
                throw SceneSyncError(.notFound, "no subscription \(subscription) on this connection")
            }
        case .history(let id, let limit):
            var records: [UInt8] = [UInt8(ascii: "[")]
            for (offset, record) in store.history.records(for: id, limit: limit).enumerated() {
                if offset > 0 { records.append(UInt8(ascii: ",")) }
                Wire.appendChangeRecord(record, to: &records)
            }
            records.append(UInt8(ascii: "]"))
            response.append("records", json: records)
        case .sync, .phase, .snapshot, .reload, .stats, .metrics:
            // Served by ``respondLater(_:)``, whose answers wait.
            throw SceneSyncError(.internal, "a request answered later reached the path of those answered now")
        }
        return response.finish()
    }

    private func respondLater(_ request: Request, then done: @escaping (Result<[UInt8], SceneSyncError>) -> Void) {
        let id = request.id
        switch request.command {
        case .sync:
            sync { clock in
                done(
                    clock.map { clock in
                        var response = ResponseWriter(id: id)
                        response.appendClock(clock)
                        return response.finish()
                    })
            }
        case .phase(let scene, let phase):
            reportPhase(phase, of: scene) { written in
                done(
                    written.map { written in
                        var response = ResponseWriter(id: id)
                        if let written { response.append("snapshot", json: EngineCore.snapshotObject(written)) }
                        return response.finish()
                    })
            }
        case .snapshot:
            snapshotAfterMerging(reason: .request) { written in
                done(
                    written.map { written in
                        var response = ResponseWriter(id: id)
                        response.append(members: EngineCore.snapshotMembers(written))
                        return response.finish()
                    })
            }
        case .reload:
            guard let reloadHandler = attachments.reloadHandler else {
                return done(.failure(SceneSyncError(.unavailable, "reload is not available")))
            }
            awaitOutside(reloadHandler) { error in
                done(error.map { .failure($0) } ?? .success(ResponseWriter(id: id).finish()))
            }
        case .stats:
            // Read first, so that every other figure is from one engine turn.
            offload {
                ResidentMemory.bytes()
            } then: { [self] (residentBytes: Int) in
                var response = ResponseWriter(id: id)
                appendStats(to: &response, residentBytes: residentBytes)
                done(.success(response.finish()))
            }
        case .metrics:
            offload {
                ResidentMemory.bytes()
            } then: { [self] (residentBytes: Int) in
                refreshGauges(residentBytes: residentBytes)
                var response = ResponseWriter(id: id)
                response.append("text", string: String(decoding: metrics.exposition(), as: UTF8.self))
                done(.success(response.finish()))
            }
        case .hello, .list, .get, .change, .subscribe, .unsubscribe, .history:
            done(
                .failure(
                    SceneSyncError(.internal, "a request answered now reached the path of those answered later")))
        }
    }

    /// Root, the daemon's own user, and the configured uids and gids may change scenes.
    func mayWrite(_ credentials: PeerCredentials?) -> Bool {
        guard let credentials else { return false }
        return credentials.uid == 0 || credentials.uid == ownUID || settings.writeUIDs.contains(credentials.uid)
            || settings.writeGIDs.contains(credentials.gid)
    }

    /// A barrier: a cookie file goes through the same inotify queue as every scene file, so once the watcher
    /// reports it, every file change made before the request has been merged; `done` then gets the clock.
    ///
    /// Once file changes are no longer merged (the daemon is stopping), nothing more can be merged before it, so it
    /// is answered at once: a cookie then would wait for an event nobody handles, and hold the shutdown.
    func sync(then done: @escaping (Result<Clock, SceneSyncError>) -> Void) {
        guard lifecycle.permits(.mergeFileChanges) else { return done(.success(store.clock)) }
        let cookie = syncBarriers.newCookie()
        syncCookies[cookie] = done
        let path = settings.scenesDirectory + "/" + EngineCore.syncCookiePrefix + cookie
        offload { () -> SystemError? in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return SystemError("create", path) }
            close(fd)
            return nil
        } reporting: {
            .syncCookieCreated(cookie: cookie, failure: $0)
        }
    }

    /// A `sync` cookie's file is created, or could not be (``EngineInput/syncCookieCreated(cookie:failure:)``): the
    /// barrier now waits for its marker.
    func syncCookieCreated(_ cookie: String, failure: SystemError?) {
        guard let done = syncCookies.removeValue(forKey: cookie) else {
            preconditionFailure("the cookie of a sync nobody asked for was created")
        }
        if let failure {
            syncBarriers.cancel(cookie)
            return done(.failure(SceneSyncError(.unavailable, "cannot create a sync cookie: \(failure)")))
        }
        // The shutdown may have begun while the cookie was being created: then no marker is handled any more.
        let stopping = !lifecycle.permits(.mergeFileChanges)
        if stopping { syncBarriers.cancel(cookie) }
        guard stopping || !syncBarriers.wait(on: cookie, { done(.success($0)) }) else { return }
        // Answered while its file was being created (a rescan read every file after it was asked for): whoever
        // answered could not remove a file that did not exist yet.
        let clock = store.clock
        removeMarkers([EngineCore.syncCookiePrefix + cookie]) { done(.success(clock)) }
    }

    static func snapshotMembers(_ written: SnapshotStore.Written) -> [UInt8] {
        var members: [UInt8] = Array(#""path":"#.utf8)
        JSONWriter.appendString(written.path, to: &members)
        members.append(literal: #","revision":"#)
        JSONWriter.appendUInt(written.revision, to: &members)
        members.append(literal: #","scenes":"#)
        JSONWriter.appendUInt(UInt64(written.scenes), to: &members)
        members.append(literal: #","bytes":"#)
        JSONWriter.appendUInt(UInt64(written.bytes), to: &members)
        return members
    }

    static func snapshotObject(_ written: SnapshotStore.Written) -> [UInt8] {
        [UInt8(ascii: "{")] + snapshotMembers(written) + [UInt8(ascii: "}")]
    }
}
