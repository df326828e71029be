/// The name of a subscription event (§6).
///
/// A name, not a `String`: every delivery of an event writes its envelope, and with a `String` each one compared
/// names, copied the name's bytes through the UTF-8 view and retained or released it in the queue. Each name's
/// envelope is a constant here, written with the subscription's digits and the shared body in one copy.
enum EventName: String, Sendable, CaseIterable {
    case change
    case state
    case resync
    case synced
    case warning
    case phase
    case snapshot
    case heartbeat

    /// `{"event":"<name>","subscription":`, the bytes every delivery of the event starts with.
    var linePrefix: StaticString {
        switch self {
        case .change: #"{"event":"change","subscription":"#
        case .state: #"{"event":"state","subscription":"#
        case .resync: #"{"event":"resync","subscription":"#
        case .synced: #"{"event":"synced","subscription":"#
        case .warning: #"{"event":"warning","subscription":"#
        case .phase: #"{"event":"phase","subscription":"#
        case .snapshot: #"{"event":"snapshot","subscription":"#
        case .heartbeat: #"{"event":"heartbeat","subscription":"#
        }
    }

}
