extension ChangeDriver {
    /// The batch of requests about to be sent, built in place: a saturated writer builds thousands a second, so
    /// nothing goes through strings or JSON encoding.
    struct Requests {
        let scene: String
        let dialect: Dialect
        private(set) var bytes: [UInt8] = []
        /// A Redis message, built apart because RESP states its length before it.
        private var payload: [UInt8] = []
        private static let publish = Array("PUBLISH".utf8)

        init(scene: String, dialect: Dialect) {
            self.scene = scene
            self.dialect = dialect
            bytes.reserveCapacity(64 * 256)
        }

        /// Starts the next batch; the capacity stays for it.
        mutating func removeAll() {
            bytes.removeAll(keepingCapacity: true)
        }

        /// The `n`-th request, the path of ``ChangeDriver/path(_:)``.
        mutating func append(_ n: Int) {
            if dialect == .redis {
                payload.removeAll(keepingCapacity: true)
                payload.append(UInt8(ascii: "@"))
                ChangeDriver.appendInt(n, to: &payload)
                payload.append(contentsOf: #" [{"type":"MyApp.Category","value":{"id":7,"name":"Desserts"}},"#.utf8)
                payload.append(contentsOf: #"{"type":"MyApp.Recipe","value":{"id":"#.utf8)
                ChangeDriver.appendInt(n, to: &payload)
                payload.append(contentsOf: #","title":"Apple pie"}}]"#.utf8)
                RESP.append([Self.publish, Array(scene.utf8), payload], to: &bytes)
                return
            }
            bytes.append(contentsOf: #"{"id":"#.utf8)
            ChangeDriver.appendInt(n, to: &bytes)
            bytes.append(contentsOf: #","op":"set","scene":""#.utf8)
            bytes.append(contentsOf: scene.utf8)
            bytes.append(contentsOf: #"","path":[{"type":"MyApp.Category","value":{"id":7,"name":"Desserts"}},"#.utf8)
            bytes.append(contentsOf: #"{"type":"MyApp.Recipe","value":{"id":"#.utf8)
            ChangeDriver.appendInt(n, to: &bytes)
            bytes.append(contentsOf: #","title":"Apple pie"}}]}"#.utf8)
            bytes.append(0x0A)
        }
    }
}
