import Foundation

@testable import SceneSyncDaemon

/// A subscriber to every scene behind a `subscriber_queue` of ``queueBound``, which reads only when the schedule
/// says so, as the connection's writer would: it lags often. The per-connection policy of §6 says what it must
/// see: every change in order with no gap, or, once it lagged, a resync (the state of every scene, then `synced`)
/// and the changes after it; its queue never holds more change events than the bound.
final class HarnessLaggingSubscriber {
    static let queueBound = 4
    let outbox: Outbox
    /// The subscription's ID, from the subscribe answer.
    private(set) var subscription: UInt64? = nil
    /// The scenes as its events told them.
    private(set) var view: [String: HarnessScene] = [:]
    /// The last revision it saw, or resynced at; `nil` before the first `synced`.
    private(set) var seen: UInt64? = nil
    /// Lag markers it reached (each asked the engine for a resync).
    private(set) var lags = 0
    /// What it read that §6 does not allow.
    private(set) var problems: [String] = []
    private var resyncing = false

    /// The `subscribe` request it sends once connected.
    static let request = Array(#"{"id":0,"op":"subscribe","scenes":["*"],"initial":false}"#.utf8)

    init(outbox: Outbox) {
        self.outbox = outbox
    }

    /// Reads everything queued for it, batch by batch, as the writer does: a lag marker has the engine queue the
    /// resync, a catch-up marker has it produce the `state` events a chunk at a time.
    func read(_ engine: EngineCore) throws {
        while true {
            let batch = outbox.takeQueued()
            guard !batch.isEmpty else { return }
            for item in batch {
                switch item {
                case .line(let bytes):
                    let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
                    if let id = object?["subscription"] as? NSNumber { subscription = id.uint64Value }
                case .event(_, let name, let body):
                    try take(name, body)
                case .lagged(let id):
                    lags += 1
                    engine.handle(.lagged(subscription: id))
                case .catchUp(let id):
                    try catchUp(id, engine)
                }
            }
            outbox.wrote()
        }
    }

    private func take(_ name: EventName, _ body: [UInt8]) throws {
        let object = try JSONSerialization.jsonObject(with: Data("{".utf8 + body + "}".utf8)) as? [String: Any] ?? [:]
        let revision = (object["revision"] as? NSNumber)?.uint64Value
        switch name {
        case .change:
            guard let revision, let scene = object["scene"] as? String,
                let version = (object["version"] as? NSNumber)?.uint64Value
            else { return problems.append("a change event without its members") }
            if resyncing { problems.append("r\(revision) came between a resync and its synced") }
            if let seen, revision != seen + 1 { problems.append("r\(revision) came after r\(seen)") }
            if seen == nil { problems.append("r\(revision) came before the first synced") }
            seen = revision
            if object["kind"] as? String == "delete" {
                view[scene] = nil
            } else {
                view[scene] = HarnessScene(
                    version: version, values: HarnessScene.values(ofWire: object["path"]) ?? [-1])
            }
        case .resync:
            if object["reason"] as? String != "lagged" {
                problems.append("a resync for \(object["reason"] ?? "nothing")")
            }
            resyncing = true
            view = [:]
        case .synced:
            guard let revision else { return problems.append("a synced event without its revision") }
            if let seen, revision < seen { problems.append("synced at r\(revision) after r\(seen)") }
            seen = revision
            resyncing = false
        case .state:
            problems.append("a state event outside a catch-up")
        default:
            break  // phases, snapshots, warnings: not counted against the bound, not checked here
        }
    }

    /// The `state` events of a catch-up, as the writer has the engine produce them.
    private func catchUp(_ id: UInt64, _ engine: EngineCore) throws {
        if !resyncing { problems.append("a catch-up without a resync before it") }
        var chunk: (lines: [UInt8], events: Int, isLast: Bool)? = nil
        repeat {
            chunk = nil
            engine.handle(.catchUpChunk(subscription: id, reply: { chunk = $0 }))
            for line in (chunk?.lines ?? []).split(separator: UInt8(ascii: "\n")) {
                let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] ?? [:]
                guard let scene = object["scene"] as? String, let state = HarnessScene(wire: object) else {
                    problems.append("a catch-up line that is not a state: \(String(decoding: line, as: UTF8.self))")
                    continue
                }
                view[scene] = state
            }
        } while chunk.map { !$0.isLast } ?? false
    }
}
