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
    /// Every `set` sent, in order: its request ID, scene and path as the file would hold it.
    var sent: [SentSet] = []
    /// Every answer, in order.
    var answers: [Answer] = []

    struct SentSet {
        let id: Int
        let scene: SceneID
        let fileBytes: [UInt8]
    }

    /// An answer as the wire says it; `revision` and `version` only for an accepted change.
    struct Answer {
        let id: Int
        let ok: Bool
        let revision: UInt64?
        let version: UInt64?
        let text: String
    }

    init(outbox: Outbox, connection: UInt64) {
        self.outbox = outbox
        self.connection = connection
    }

    /// The request line of a `set` of `values` (root first, codable elements of type `T.V`), as a client writes
    /// it, with the file content the daemon must write for it (top of the stack first).
    static func setLine(id: Int, scene: SceneID, values: [Int]) -> (line: [UInt8], fileBytes: [UInt8]) {
        let elements = values.map { "{\"type\":\"T.V\",\"value\":\($0)}" }.joined(separator: ",")
        let line = "{\"id\":\(id),\"op\":\"set\",\"scene\":\"\(scene)\",\"path\":[\(elements)]}"
        return (Array(line.utf8), HarnessClient.fileBytes(values))
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
            read.append(
                Answer(
                    id: id, ok: object["ok"] as? Bool ?? false,
                    revision: (object["revision"] as? NSNumber)?.uint64Value,
                    version: (object["version"] as? NSNumber)?.uint64Value, text: text))
        }
        answers.append(contentsOf: read)
        return read
    }
}
