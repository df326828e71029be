import Logging
import Synchronization

/// The daemon's notifications to systemd, each failure logged.
///
/// A notification that does not arrive changes what systemd does: a lost `READY=1` fails the start after
/// `TimeoutStartSec=`, lost watchdog pings get the service killed. The operator must find out why in the log. A
/// kind that keeps failing (a ping every few seconds) is logged once, then once more when it works again.
final class ReportedNotifier: Sendable {
    let notifier: SystemdNotifier
    let logger: Logger
    /// The kinds whose last notification failed.
    private let failing = Mutex<Set<String>>([])

    init(_ notifier: SystemdNotifier, logger: Logger) {
        self.notifier = notifier
        self.logger = logger
    }

    var isEnabled: Bool { notifier.isEnabled }
    var watchdogInterval: Duration? { notifier.watchdogInterval }

    func ready() { report("READY=1") { () throws(SystemdNotifyError) in try notifier.ready() } }
    func readyAfterReload() { report("READY=1") { () throws(SystemdNotifyError) in try notifier.readyAfterReload() } }
    func reloading() { report("RELOADING=1") { () throws(SystemdNotifyError) in try notifier.reloading() } }
    func stopping() { report("STOPPING=1") { () throws(SystemdNotifyError) in try notifier.stopping() } }
    func watchdogPing() { report("WATCHDOG=1") { () throws(SystemdNotifyError) in try notifier.watchdogPing() } }
    func status(_ text: String) { report("STATUS=") { () throws(SystemdNotifyError) in try notifier.status(text) } }

    /// Only when systemd listens: outside systemd there is no timeout to extend.
    func extendTimeout(_ duration: Duration) {
        guard notifier.isEnabled else { return }
        report("EXTEND_TIMEOUT_USEC=") { () throws(SystemdNotifyError) in try notifier.extendTimeout(duration) }
    }

    private func report(_ kind: String, _ send: () throws(SystemdNotifyError) -> Void) {
        do throws(SystemdNotifyError) {
            try send()
            if failing.withLock({ $0.remove(kind) }) != nil {
                logger.notice("systemd notifications work again", metadata: ["notification": "\(kind)"])
            }
        } catch {
            if failing.withLock({ $0.insert(kind).inserted }) {
                logger.warning(
                    "cannot notify systemd; it may time the daemon out or kill it",
                    metadata: ["notification": "\(kind)", "error": "\(error)"])
            }
        }
    }
}
