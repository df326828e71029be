extension ConnectionOutput {
    /// One entry of a connection's output queue. Markers stand for output the writer has the engine produce when it
    /// gets there, so that what a connection holds stays bounded (§6).
    enum Item: Sendable {
        /// A complete line (a response, or an event without subscription such as `shutdown`).
        case line([UInt8])
        /// A subscription event: `{"event":name,"subscription":id[,body]}`; `body` is shared by every subscriber.
        case event(subscription: UInt64, name: EventName, body: [UInt8])
        /// The subscription dropped events; the writer must request a resync when it gets here.
        case lagged(subscription: UInt64)
        /// The `state` events of a subscription's catch-up go here, produced by the engine as the socket takes them.
        case catchUp(subscription: UInt64)

        /// What the item costs against `max_pending_bytes`: about its size on the wire. Change events are bounded
        /// by their number instead (`subscriber_queue`), so that a connection's many small changes never block its
        /// requests; the markers cost nothing, since what they stand for is made a chunk at a time.
        var cost: Int {
            switch self {
            case .line(let bytes): bytes.count
            case .event(_, let name, let body): name == .change ? 0 : 48 + name.rawValue.utf8.count + body.count
            case .lagged, .catchUp: 0
            }
        }
    }
}
