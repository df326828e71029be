import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension SceneEngine {
    /// Serves a connection's requests in order and queues each answer, all in one turn unless a request has to
    /// wait (`sync`, a snapshot, a reload): the changes of a pipelined burst reach the subscribers' queues before
    /// any of their writers runs, so each writer sends them together.
    ///
    /// Stops early when the connection's pending output reaches `socket.max_pending_bytes` (§6): the caller waits
    /// for room before it hands over the rest. Returns how many were served.
    func serve(_ requests: ArraySlice<InboundRequest>, connection: UInt64, outbox: Outbox) async -> Int {
        let start = ContinuousClock.now
        defer { metrics.timeTurn(since: start) }
        var served = 0
        var index = requests.startIndex
        while index < requests.endIndex {
            // A run of changes goes to one group commit (at most `changeGroupLimit`, so that the answers of one
            // group cannot overshoot the connection's pending-output bound by much).
            var end = index
            while end < requests.endIndex, end - index < Self.changeGroupLimit, requests[end].isSceneChange {
                end += 1
            }
            if end > index {
                let changes = requests[index..<end].compactMap { item -> Request? in
                    if case .request(let request) = item { return request }
                    return nil
                }
                await serveChanges(changes, connection: connection, outbox: outbox)
                served += end - index
                index = end
            } else {
                switch requests[index] {
                case .answer(let line):
                    outbox.enqueue(line: line)
                case .request(let request):
                    if let response = await serve(request, connection: connection) { outbox.enqueue(line: response) }
                }
                served += 1
                index += 1
            }
            if !outbox.hasRoom { break }
        }
        return served
    }

    static let changeGroupLimit = 64

    /// Serves consecutive changes of one connection: checks each, waits for an app still writing a scene's file,
    /// and hands them to the group commit, whose answers come in the requests' order.
    func serveChanges(_ requests: [Request], connection: UInt64, outbox: Outbox) async {
        var group: [ChangeRequest] = []
        drainWatcher()
        for request in requests {
            guard let context = registry.connections[connection] else { break }
            guard case .change(let operation, let scene, let ifVersion) = request.command else { continue }
            var refusal: SceneSyncError? = nil
            let seenModified = store.scene(scene)?.modified
            if !mayWrite(context.credentials) {
                let who = context.credentials.map { "uid \($0.uid)" } ?? "an unidentified peer"
                refusal = SceneSyncError(
                    .forbidden, "\(who) may not change scenes (see access.write_uids and access.write_gids)")
            } else if !lifecycle.permits(.acceptClientChanges) {
                refusal = SceneSyncError(.unavailable, "the daemon is shutting down")
            } else if sceneFiles.isOpen(scene) {
                // An app holds the file open: the changes before this one go first, this one waits for the close.
                await submit(group, outbox: outbox)
                group = []
                if !(await waitForWriter(scene)) { refusal = stillOpenError(scene) }
            }
            if let refusal {
                await submit(group, outbox: outbox)
                group = []
                outbox.enqueue(line: ResponseWriter.error(id: request.id, refusal))
                continue
            }
            let origin = Origin(
                source: .client, client: context.clientName, uid: context.credentials?.uid,
                pid: context.credentials?.pid)
            group.append(
                ChangeRequest(
                    id: request.id, operation: operation, scene: scene, ifVersion: ifVersion, origin: origin,
                    seenModified: seenModified))
        }
        await submit(group, outbox: outbox)
        publishStatus()
    }

    /// Serves one request. Returns the response line, or `nil` when the engine queued it itself (`subscribe`, whose
    /// response must precede its events in the same turn).
    func serve(_ request: Request, connection: UInt64) async -> [UInt8]? {
        guard let context = registry.connections[connection] else { return nil }
        if request.command.isChanging, !mayWrite(context.credentials) {
            let who = context.credentials.map { "uid \($0.uid)" } ?? "an unidentified peer"
            return ResponseWriter.error(
                id: request.id,
                SceneSyncError(
                    .forbidden, "\(who) may not change scenes (see access.write_uids and access.write_gids)"))
        }
        do throws(SceneSyncError) {
            return try await respond(request, context: context)
        } catch {
            return ResponseWriter.error(id: request.id, error)
        }
    }

    private func respond(
        _ request: Request, context: SubscriptionRegistry.Connection
    ) async throws(SceneSyncError) -> [UInt8]? {
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
                scenes.append(contentsOf: #"{"scene":"#.utf8)
                JSONWriter.appendString(scene.id.rawValue, to: &scenes)
                scenes.append(contentsOf: #","version":"#.utf8)
                JSONWriter.appendUInt(scene.version, to: &scenes)
                scenes.append(contentsOf: #","modified":"#.utf8)
                JSONWriter.appendUInt(scene.modified, to: &scenes)
                scenes.append(contentsOf: #","depth":"#.utf8)
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
            // Changes are served by ``serveChanges(_:connection:outbox:)``, never one at a time.
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
        case .sync:
            response.appendClock(try await sync())
        case .phase(let scene, let phase):
            if let written = try await reportPhase(phase, of: scene) {
                response.append("snapshot", json: SceneEngine.snapshotObject(written))
            }
        case .snapshot:
            let written = try await snapshotAfterMerging(reason: .request).get()
            response.append(members: SceneEngine.snapshotMembers(written))
        case .reload:
            guard let reloadHandler = attachments.reloadHandler else {
                throw SceneSyncError(.unavailable, "reload is not available")
            }
            if let error = await reloadHandler() { throw error }
        case .stats:
            // Read first, so that every other figure is from one engine turn.
            let residentBytes = await io.run { ResidentMemory.bytes() }
            appendStats(to: &response, residentBytes: residentBytes)
        case .metrics:
            let residentBytes = await io.run { ResidentMemory.bytes() }
            refreshGauges(residentBytes: residentBytes)
            response.append("text", string: String(decoding: metrics.exposition(), as: UTF8.self))
        }
        return response.finish()
    }

    /// Root, the daemon's own user, and the configured uids and gids may change scenes.
    func mayWrite(_ credentials: PeerCredentials?) -> Bool {
        guard let credentials else { return false }
        return credentials.uid == 0 || credentials.uid == ownUID || settings.writeUIDs.contains(credentials.uid)
            || settings.writeGIDs.contains(credentials.gid)
    }

    /// A barrier: a cookie file goes through the same inotify queue as every scene file, so once the watcher
    /// reports it, every file change made before the request has been merged.
    ///
    /// Once file changes are no longer merged (the daemon is stopping), nothing more can be merged before it, so it
    /// is answered at once: a cookie then would wait for an event nobody handles, and hold the shutdown.
    func sync() async throws(SceneSyncError) -> Clock {
        guard lifecycle.permits(.mergeFileChanges) else { return store.clock }
        let cookie = syncBarriers.newCookie()
        let path = settings.scenesDirectory + "/" + SceneEngine.syncCookiePrefix + cookie
        let failure = await io.run { () -> SystemError? in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return SystemError("create", path) }
            close(fd)
            return nil
        }
        if let failure {
            syncBarriers.cancel(cookie)
            throw SceneSyncError(.unavailable, "cannot create a sync cookie: \(failure)")
        }
        var answered = false
        let clock = await withCheckedContinuation { continuation in
            // The shutdown may have begun while the cookie was being created: then no marker is handled any more.
            let stopping = !lifecycle.permits(.mergeFileChanges)
            if stopping { syncBarriers.cancel(cookie) }
            answered = stopping || !syncBarriers.wait(on: cookie, continuation)
            if answered { continuation.resume(returning: store.clock) }
        }
        // Answered while its file was being created (a rescan read every file after it was asked for): whoever
        // answered could not remove a file that did not exist yet.
        if answered { await removeMarkers([SceneEngine.syncCookiePrefix + cookie]) }
        return clock
    }

    static func snapshotMembers(_ written: SnapshotStore.Written) -> [UInt8] {
        var members: [UInt8] = Array(#""path":"#.utf8)
        JSONWriter.appendString(written.path, to: &members)
        members.append(contentsOf: #","revision":"#.utf8)
        JSONWriter.appendUInt(written.revision, to: &members)
        members.append(contentsOf: #","scenes":"#.utf8)
        JSONWriter.appendUInt(UInt64(written.scenes), to: &members)
        members.append(contentsOf: #","bytes":"#.utf8)
        JSONWriter.appendUInt(UInt64(written.bytes), to: &members)
        return members
    }

    static func snapshotObject(_ written: SnapshotStore.Written) -> [UInt8] {
        [UInt8(ascii: "{")] + snapshotMembers(written) + [UInt8(ascii: "}")]
    }
}

extension InboundRequest {
    /// A `set`, `push`, `pop` or `delete`: served by the group commit.
    var isSceneChange: Bool {
        guard case .request(let request) = self, case .change = request.command else { return false }
        return true
    }
}
