import NIOCore

extension ConnectionHandler {
    /// Closes the connection at shutdown when `policy` says so, checking every 250 ms. A connection whose writer
    /// drained everything closes itself before that (the engine closed its outbox after the `shutdown` event).
    func closeOnceStalled(policy: ShutdownClosePolicy, began: ContinuousClock.Instant, buffered: Int = .max) {
        guard let context else { return }
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(250)) {
            let buffered = self.noteDrain(since: buffered)
            guard context.channel.isActive else { return }
            if let outbox = self.connection?.outbox, !policy.closes(outbox, began: began, now: .now) {
                self.closeOnceStalled(policy: policy, began: began, buffered: buffered)
            } else {
                context.close(promise: nil)
            }
        }
    }

    /// Notes progress when what the channel itself buffers shrank since the last look (`buffered`): the socket
    /// took bytes of a chunk that is still being written. Returns what it buffers now.
    private func noteDrain(since buffered: Int) -> Int {
        // Fails only on a closed channel: nothing drains there, and the caller stops checking an inactive one.
        guard let context, let now = try? context.channel.syncOptions?.getOption(.bufferedWritableBytes) else {
            return buffered
        }
        if now < buffered { connection?.outbox.noteProgress() }
        return now
    }
}
