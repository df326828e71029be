@testable import SceneSyncDaemon

/// An output item as the tests name it. Every line and event carries the serial of the input that queued it at the
/// start of its bytes (`<serial>:` and padding), so two tokens are equal only when they are the same item, and its
/// size, so that a model can price it without the code under test.
enum OutputToken: Hashable, CustomStringConvertible {
    case line(serial: Int, bytes: Int)
    case event(subscription: UInt64, name: String, serial: Int, bodyBytes: Int)
    case lagged(subscription: UInt64)
    case catchUp(subscription: UInt64)

    init(_ item: ConnectionOutput.Item) {
        switch item {
        case .line(let bytes): self = .line(serial: Self.serial(of: bytes), bytes: bytes.count)
        case .event(let subscription, let name, let body):
            self = .event(
                subscription: subscription, name: name.rawValue, serial: Self.serial(of: body), bodyBytes: body.count)
        case .lagged(let subscription): self = .lagged(subscription: subscription)
        case .catchUp(let subscription): self = .catchUp(subscription: subscription)
        }
    }

    /// The bytes of an item with this serial, `size` bytes long (at least the serial and its colon).
    static func bytes(serial: Int, size: Int) -> [UInt8] {
        let head = Array("\(serial):".utf8)
        return head + Array(repeating: UInt8(ascii: "x"), count: max(0, size - head.count))
    }

    private static func serial(of bytes: [UInt8]) -> Int {
        Int(String(decoding: bytes.prefix { $0 != UInt8(ascii: ":") }, as: UTF8.self)) ?? -1
    }

    /// What §6 prices the item at against `max_pending_bytes`, restated: a line's bytes; an event other than a
    /// change about its size on the wire (the envelope, its name, its body); change events and markers nothing.
    var cost: Int {
        switch self {
        case .line(_, let bytes): bytes
        case .event(_, let name, _, let bodyBytes): name == "change" ? 0 : 48 + name.utf8.count + bodyBytes
        case .lagged, .catchUp: 0
        }
    }

    var subscription: UInt64? {
        switch self {
        case .line: nil
        case .event(let subscription, _, _, _), .lagged(let subscription), .catchUp(let subscription): subscription
        }
    }

    var serial: Int? {
        switch self {
        case .line(let serial, _), .event(_, _, let serial, _): serial
        case .lagged, .catchUp: nil
        }
    }

    var isEvent: Bool {
        if case .event = self { true } else { false }
    }

    var description: String {
        switch self {
        case .line(let serial, let bytes): "line#\(serial)(\(bytes)B)"
        case .event(let subscription, let name, let serial, _): "\(subscription):\(name)#\(serial)"
        case .lagged(let subscription): "\(subscription):LAGGED"
        case .catchUp(let subscription): "\(subscription):CATCHUP"
        }
    }
}
