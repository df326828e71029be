/// Whom a subscriber pool listens to, and how each speaks: the reader threads are the same for scenesync and its
/// peers, only the subscription request and the per-line decoding differ.
enum SubscriberProtocol: Sendable {
    /// scenesyncd: `subscribe` to `*`; `change` events carrying their revision.
    case scenesync
    /// Redis: `SUBSCRIBE channel`; each message's payload is a line `@N …`, N the publisher's sequence.
    case redis(channel: String)
    /// The raw inotify relay: every line is `name content` of a renamed scene file.
    case relay
    /// watchman: a subscription on `root` for `*.json` names; a name maps to its file's newest write through
    /// `latest` (watchman reports names, not content).
    case watchman(root: String, latest: StampTable)

    /// What a new subscriber sends.
    var subscribeRequest: [UInt8] {
        switch self {
        case .scenesync:
            return Array(#"{"id":1,"op":"subscribe","scenes":["*"],"initial":false}"#.utf8) + [0x0A]
        case .redis(let channel):
            return RESP.command(["SUBSCRIBE", channel])
        case .relay:
            return []
        case .watchman(let root, _):
            let options = #"{"expression":["suffix","json"],"fields":["name"],"empty_on_fresh_instance":true}"#
            return Array(#"["subscribe","\#(root)","bench",\#(options)]"#.utf8) + [0x0A]
        }
    }

    /// The answer after which the subscription is live (the line it is in ends the handshake).
    var syncedMarker: [UInt8] {
        switch self {
        case .scenesync: return Array(#""event":"synced""#.utf8)
        case .redis: return Array("\r\n:1\r".utf8)
        case .relay: return Array("ready".utf8)
        case .watchman: return Array(#""subscribe":"bench""#.utf8)
        }
    }

    /// An answer that means the subscription failed.
    var errorMarker: [UInt8] {
        switch self {
        case .scenesync: return Array(#""ok":false"#.utf8)
        case .redis: return Array("-ERR".utf8)
        case .relay: return Array("\u{1}".utf8)
        case .watchman: return Array(#""error":"#.utf8)
        }
    }
}
