import Foundation
import SceneSyncCore
import Testing

/// A subscription that records every event it receives, on a task of its own, until the daemon closes the
/// connection. The fault tests read these records after the fact, the way etcd's robustness suite checks watches.
final class RecordingSubscriber: @unchecked Sendable {
    let client: SocketClient
    /// The clock the subscription resumed from, if any.
    let since: (epoch: String, revision: UInt64)?
    /// The epoch of the `subscribe` response.
    let epoch: String
    let name: String
    let events = AsyncVariable<[JSONValue]>([])
    /// Why recording stopped: nil while it runs; "closed" when the daemon closed the connection.
    let ending = AsyncVariable<String?>(nil)

    private init(client: SocketClient, since: (epoch: String, revision: UInt64)?, epoch: String, name: String) {
        self.client = client
        self.since = since
        self.epoch = epoch
        self.name = name
    }

    /// Subscribes to every scene (resuming from `since` when given) and starts recording.
    static func start(
        _ daemon: DaemonProcess, name: String, since: (epoch: String, revision: UInt64)? = nil
    ) async throws -> RecordingSubscriber {
        let client = try await daemon.connect()
        client.timeout = .seconds(60)
        var fields: [String: String] = [:]
        if let since { fields["since"] = #"{"epoch":\#(J.string(since.epoch)),"revision":\#(since.revision)}"# }
        let response = try await client.ok("subscribe", fields)
        let subscriber = RecordingSubscriber(
            client: client, since: since, epoch: response["epoch"]?.stringValue ?? "", name: name)
        let pending = client.takeEvents()
        subscriber.events.update { $0 = pending }
        Task { await subscriber.record() }
        return subscriber
    }

    private func record() async {
        while true {
            do {
                let event = try await client.nextEvent()
                events.update { $0.append(event) }
            } catch SocketClient.ClientError.closed {
                ending.update { $0 = "closed" }
                return
            } catch {
                ending.update { $0 = "\(error)" }
                return
            }
        }
    }

    /// The last clock this subscription was brought up to (a change or `synced`), if any.
    var lastClock: (epoch: String, revision: UInt64)? {
        var clock = since
        for event in events.value where event.eventName == "change" || event.eventName == "synced" {
            if let epoch = event["epoch"]?.stringValue, let revision = event.revision { clock = (epoch, revision) }
        }
        return clock
    }

    /// Waits until the daemon has closed the connection and returns every event.
    func finish(timeout: Duration = .seconds(90)) async throws -> [JSONValue] {
        let reason = try await ending.wait(for: "\(name)'s connection to close", until: .now + timeout) { $0 }
        guard reason == "closed" else { throw SocketClient.ClientError.unexpected("\(name) stopped: \(reason)") }
        return events.value
    }
}

/// Checks recorded subscriptions to every scene against §4 and §6, across restarts: within an epoch a revision
/// names one content; each subscription is ordered, without gaps or duplicates until a `resync`, and resumes
/// exactly after its `since`; nothing follows `shutdown`.
struct WatchValidator {
    /// What each revision of each epoch was, as first seen: `scene kind path`.
    private(set) var contents: [String: [UInt64: String]] = [:]
    private(set) var issues: [(kind: String, detail: String)] = []
    /// The highest change revision seen per epoch.
    private(set) var highest: [String: UInt64] = [:]

    /// Records the issues as test failures: the first three of each kind, and how many there were in all.
    func recordIssues() {
        var byKind: [String: [String]] = [:]
        for issue in issues { byKind[issue.kind, default: []].append(issue.detail) }
        for (_, group) in byKind.sorted(by: { $0.key < $1.key }) {
            for issue in group.prefix(3) { Issue.record(Comment(rawValue: "seed \(Fault.seed): \(issue)")) }
            if group.count > 3 { Issue.record(Comment(rawValue: "… and \(group.count - 3) more like the above")) }
        }
    }

    static func content(of change: JSONValue) -> String {
        let path = change["path"].map { String(decoding: $0.serialized(), as: UTF8.self) } ?? "-"
        return "\(change["scene"]?.stringValue ?? "?") \(change["kind"]?.stringValue ?? "?") \(path)"
    }

    /// Checks one subscription's events (a subscription to `*`, which sees every change).
    mutating func check(_ name: String, since: (epoch: String, revision: UInt64)?, epoch: String, _ events: [JSONValue])
    {
        // The next change revision this subscription must get; nil until it is known.
        var expected: UInt64? = since.flatMap { $0.epoch == epoch ? $0.revision + 1 : nil }
        var sawShutdown = false
        var sawSynced = false
        for (index, event) in events.enumerated() {
            let at = "\(name) event \(index) (\(event.text.prefix(160)))"
            if sawShutdown {
                issues.append((kind: "an event after shutdown", detail: "\(at): an event after shutdown"))
                continue
            }
            switch event.eventName {
            case "resync":
                // The catch-up starts over from the current state; a lag does the same later on.
                if event["reason"]?.stringValue != "lagged", sawSynced {
                    issues.append(
                        (
                            kind: "a resync after synced that is not lagged",
                            detail: "\(at): a resync after synced that is not lagged"
                        ))
                }
                expected = nil
            case "change":
                guard let revision = event.revision, let changeEpoch = event["epoch"]?.stringValue else {
                    issues.append((kind: "a change without a clock", detail: "\(at): a change without a clock"))
                    continue
                }
                if let next = expected, revision != next {
                    issues.append(
                        (
                            kind: "a gap or a duplicate",
                            detail: "\(at): revision \(revision) where \(next) was due (a gap or a duplicate)"
                        ))
                }
                expected = revision + 1
                let content = Self.content(of: event)
                if let earlier = contents[changeEpoch, default: [:]][revision], earlier != content {
                    issues.append(
                        (
                            kind: "a revision handed out twice",
                            detail:
                                "\(at): epoch \(changeEpoch) revision \(revision) handed out twice: \(earlier) | \(content)"
                        ))
                } else {
                    contents[changeEpoch, default: [:]][revision] = content
                }
                highest[changeEpoch] = max(highest[changeEpoch] ?? 0, revision)
            case "synced":
                guard let revision = event.revision else { continue }
                if let next = expected, revision + 1 != next {
                    issues.append(
                        (
                            kind: "synced does not follow the changes",
                            detail: "\(at): synced at \(revision) but the changes ran up to \(next - 1)"
                        ))
                }
                expected = revision + 1
                sawSynced = true
            case "shutdown":
                sawShutdown = true
            default:
                break
            }
        }
        if !sawShutdown {
            issues.append(
                (kind: "no shutdown event", detail: "\(name): the connection closed without a shutdown event"))
        }
    }
}
