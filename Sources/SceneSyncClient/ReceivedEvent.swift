public import SceneSyncCore

/// An event together with the JSON object it came in, for tools that pass events on unchanged (`scenesync watch
/// --json`) while still reading them typed.
public struct ReceivedEvent: Sendable, Equatable {
    /// The event, decoded.
    public var event: SceneSyncEvent
    /// The event object as the daemon sent it. For the events a ``ResilientSubscription`` makes up itself
    /// (`disconnected`, `reconnected`, a resync with reason `interrupted`) an object of the same shape without
    /// `subscription`, so that a JSON consumer sees them too.
    public var json: JSONValue

    /// Pairs an event with its JSON.
    public init(event: SceneSyncEvent, json: JSONValue) {
        self.event = event
        self.json = json
    }

    /// The subscription the event belongs to (absent for `shutdown` and for client-side events).
    public var subscription: UInt64? { json["subscription"]?.uint64Value }
}
