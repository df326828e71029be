/// A command with the global options, so that `main` can tell from the parsed command whether errors are wanted as
/// JSON.
protocol GlobalCommand {
    var global: GlobalOptions { get }
}

extension SceneSyncCommand: GlobalCommand {}
extension StatusCommand: GlobalCommand {}
extension ListCommand: GlobalCommand {}
extension GetCommand: GlobalCommand {}
extension SetCommand: GlobalCommand {}
extension PushCommand: GlobalCommand {}
extension PopCommand: GlobalCommand {}
extension DeleteCommand: GlobalCommand {}
extension WatchCommand: GlobalCommand {}
extension HistoryCommand: GlobalCommand {}
extension SnapshotCommand: GlobalCommand {}
extension PhaseCommand: GlobalCommand {}
extension ReloadCommand: GlobalCommand {}
extension MetricsCommand: GlobalCommand {}
extension SyncCommand: GlobalCommand {}
extension WaitCommand: GlobalCommand {}
