extension EngineCore {
    func setStatusHandler(_ handler: @escaping @Sendable (String) -> Void) {
        attachments.onStatusChange = handler
        let line = statusLine
        _ = report.status.send(line, now: .now)
        handler(line)
    }

    /// The one-line summary for systemd's `STATUS=`.
    var statusLine: String {
        report.statusLine(scenes: store.count, revision: store.revision, subscribers: registry.subscriptions.count)
    }

    /// Keeps systemd's status line current, at most once per ``StatusThrottle/interval`` (see ``StatusThrottle``);
    /// `force` sends at once.
    func publishStatus(force: Bool = false) {
        guard attachments.onStatusChange != nil else { return }
        switch report.status.changed(now: .now, force: force) {
        case .send:
            sendStatus()
        case .flush(let deadline):
            schedule(at: deadline) { [self] in flushStatus() }
        case .none:
            break
        }
    }

    private func flushStatus() {
        report.status.flushed()
        sendStatus()
    }

    private func sendStatus() {
        let line = statusLine
        if report.status.send(line, now: .now) { attachments.onStatusChange?(line) }
    }
}
