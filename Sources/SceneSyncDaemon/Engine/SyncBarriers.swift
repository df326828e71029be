/// The `sync` barriers waiting for their cookie, as a value: a cookie file goes through the same inotify queue as
/// every scene file, so once its marker is merged, every file change made before the request has been merged too.
/// No I/O: the shell creates and removes the cookie files and resumes the waiters handed back.
struct SyncBarriers<Waiter> {
    private var nextCookie: UInt64 = 1
    private var waiting: [String: [Waiter]] = [:]

    /// The cookie for a new barrier: the shell creates its file, then calls ``wait(on:_:)``. The barrier counts as
    /// waiting from now on, so a marker merged while the file is still being created is not missed.
    mutating func newCookie() -> String {
        defer { nextCookie += 1 }
        let cookie = String(nextCookie)
        waiting[cookie] = []
        return cookie
    }

    /// Waits for the cookie's marker. Returns false when the barrier was already answered (its marker arrived
    /// while its file was created, or a bulk step answered it): the waiter goes on at once.
    mutating func wait(on cookie: String, _ waiter: Waiter) -> Bool {
        guard waiting[cookie] != nil else { return false }
        waiting[cookie]?.append(waiter)
        return true
    }

    /// The cookie's file could not be created: no marker will come.
    mutating func cancel(_ cookie: String) {
        waiting[cookie] = nil
    }

    /// The cookies waiting now. A bulk step that reads files off the engine (a rescan) answers only those asked for
    /// before it began: one asked for meanwhile may follow an app's write the step had already read past.
    var waitingCookies: Set<String> { Set(waiting.keys) }

    /// The cookie's marker was merged, in order with the file events around it: its waiters may go on.
    mutating func arrived(_ cookie: String) -> [Waiter] {
        waiting.removeValue(forKey: cookie) ?? []
    }

    /// Answers the barriers of `cookies` at once (a bulk step read every file after they were asked for).
    mutating func answer(_ cookies: Set<String>) -> [(cookie: String, waiters: [Waiter])] {
        cookies.compactMap { cookie in waiting.removeValue(forKey: cookie).map { (cookie, $0) } }
    }

    /// Every barrier, at shutdown.
    mutating func answerAll() -> [Waiter] {
        defer { waiting = [:] }
        return waiting.values.flatMap { $0 }
    }
}
