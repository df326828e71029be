import Foundation
import SceneSyncCore

@testable import SceneSyncDaemon

/// One client connection of the harness, played as the daemon's connection handler plays it: requests wait until
/// the engine has served the batch before them, and the answers are read from the connection's real ``Outbox``.
final class HarnessClient {
    let outbox: Outbox
    let connection: UInt64
    /// Requests read from the socket and not served yet, in order.
    var unserved: [InboundRequest] = []
    /// A batch is with the engine: nothing more is handed over until it says how many it served.
    var batchWithEngine = false
    /// Counts of served requests the engine reported later, through `resume`.
    let resumed = HarnessMailbox<Int>()
    /// Every request sent, in order.
    var sent: [Sent] = []
    /// Every answer, in order.
    var answers: [Answer] = []

    struct Sent {
        let id: Int
        let request: HarnessRequest
        /// When the engine was first handed it: its answer may reflect nothing older.
        var handedOver: Moment? = nil
    }

    /// A moment of the schedule: the store's revision then, and how many app writes had been made.
    struct Moment {
        let revision: UInt64
        let appWrites: Int
    }

    /// An answer as the wire says it.
    struct Answer {
        let id: Int
        let ok: Bool
        let text: String
        let object: [String: Any]

        var revision: UInt64? { (object["revision"] as? NSNumber)?.uint64Value }
        var version: UInt64? { (object["version"] as? NSNumber)?.uint64Value }
        var error: [String: Any]? { object["error"] as? [String: Any] }
        var errorCode: String? { error?["code"] as? String }
        /// The snapshot a `snapshot` answer (its own members) or a `phase background` answer (`snapshot`) names.
        var snapshot: (path: String, revision: UInt64)? {
            let members = object["snapshot"] as? [String: Any] ?? object
            guard let path = members["path"] as? String, let revision = members["revision"] as? NSNumber else {
                return nil
            }
            return (path, revision.uint64Value)
        }
    }

    init(outbox: Outbox, connection: UInt64) {
        self.outbox = outbox
        self.connection = connection
    }

    /// A codable scene file holding `values`, root first, as the daemon writes it: top of the stack first.
    static func fileBytes(_ values: [Int]) -> [UInt8] {
        let items = values.reversed().map { "\"T.V\",\"\($0)\"" }.joined(separator: ",")
        return Array("[\(items)]".utf8)
    }

    /// Reads every line queued for the client now.
    func readAnswers() throws -> [Answer] {
        var read: [Answer] = []
        for item in outbox.takeQueued() {
            guard case .line(let bytes) = item else { continue }
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
            guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let id = object["id"] as? Int
            else { continue }
            read.append(Answer(id: id, ok: object["ok"] as? Bool ?? false, text: text, object: object))
        }
        if !read.isEmpty { outbox.wrote() }
        answers.append(contentsOf: read)
        return read
    }
}
