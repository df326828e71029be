@testable import SceneSyncDaemon

extension ConnectionOutput.Item {
    /// A short name of each item, for tests to compare what a queue holds: `line:…`, `1:change`, `1:LAGGED`,
    /// `1:CATCHUP`.
    static func names(_ items: some Sequence<Self>) -> [String] {
        items.map { item in
            switch item {
            case .line(let bytes): "line:" + String(decoding: bytes, as: UTF8.self)
            case .event(let subscription, let name, _): "\(subscription):\(name)"
            case .lagged(let subscription): "\(subscription):LAGGED"
            case .catchUp(let subscription): "\(subscription):CATCHUP"
            }
        }
    }
}
