import Foundation
import SceneSyncCore

@testable import SceneSyncDaemon

/// One client connection of the harness, played as the daemon's ``ConnectionHandler`` plays it: the requests the
/// client sends wait in its socket until a read the connection's real ``ReadGate`` passed on takes them, the gate says
/// which go to the engine next, one batch at a time, and the answers wait in the connection's real ``Outbox`` until
/// the client reads them (HarnessClient+ReadGate.swift).
final class HarnessClient {
    let harness: EngineHarness
    let outbox: Outbox
    let connection: UInt64
    /// The reading side of the connection, as the handler holds it.
    var gate = ReadGate<InboundRequest>()
    /// Requests the client wrote and the connection has not read yet, in order.
    var socket: [InboundRequest] = []
    /// A read was passed on to the socket: what the client writes is read.
    var readOutstanding = false
    /// A batch is with the engine: the harness's own account, to check the gate's.
    var batchWithEngine = false
    /// How many requests the engine reported served, in all.
    var servedCount = 0
    /// Counts of served requests the engine reported later, through `resume`.
    let resumed = HarnessMailbox<Int>()
    /// What the connection did that §6 does not allow, in order.
    var problems: [String] = []
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
        /// Scene writes that had failed (``HarnessFaults/firedCount``).
        let failedWrites: Int
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

    init(harness: EngineHarness, outbox: Outbox, connection: UInt64) {
        self.harness = harness
        self.outbox = outbox
        self.connection = connection
    }

    /// A codable scene file holding `values`, root first, as the daemon writes it: top of the stack first.
    static func fileBytes(_ values: [Int]) -> [UInt8] {
        let items = values.reversed().map { "\"T.V\",\"\($0)\"" }.joined(separator: ",")
        return Array("[\(items)]".utf8)
    }

    /// Reads every line queued for the client now, as its writer would write them; the room this makes releases a
    /// reader waiting for it.
    func readAnswers() throws -> [Answer] {
        var read: [Answer] = []
        let queued = outbox.takeQueued()
        for item in queued {
            guard case .line(let bytes) = item else { continue }
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
            guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let id = object["id"] as? Int
            else { continue }
            read.append(Answer(id: id, ok: object["ok"] as? Bool ?? false, text: text, object: object))
        }
        answers.append(contentsOf: read)
        if !queued.isEmpty { outbox.wrote() }
        return read
    }

    /// Everything the client sent was read, served and answered, and it read every answer.
    var isSettled: Bool {
        socket.isEmpty && gate.pending.isEmpty && !batchWithEngine && answers.count == sent.count
    }
}
