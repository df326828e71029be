/// The daemon's log, read as it grows.
extension DaemonProcess {
    /// Whether the daemon's log comes to hold `text` within `timeout`. The daemon writes its log from a writer of its
    /// own, after the answer or event a test waits on may already have gone out, so a log line is waited for like
    /// any other condition the daemon reports, never read once at the moment the test got there.
    func logs(_ text: String, timeout: Duration = .seconds(30)) async -> Bool {
        await eventually(timeout: timeout) { stderrText.contains(text) }
    }
}
