import Foundation
import SceneSyncCore
import Testing

/// A connection that reaches `socket.max_pending_bytes` (§6) is read from again once its client takes the output.
@Suite struct PendingBoundTests {
    /// A burst of requests answered at once, whose answers pass the bound only with the last one: nothing is left
    /// to serve, the output is at the bound when NIO asks to read again, and the read is held back. Once the client
    /// reads the answers, the held read must be made; a connection that stayed deaf would leave the next request
    /// unanswered.
    @Test func aReadHeldBackAtTheBoundIsMadeOnceTheClientReads() async throws {
        let daemon = try DaemonProcess(config: "socket: {max_pending_bytes: 65536}\n")
        defer { daemon.cleanup() }
        let padding = String(repeating: "p", count: 13_500)
        try Data(#"[{"value":"\#(padding)"}]"#.utf8).write(to: daemon.sceneFile("big"))
        try await daemon.start()
        let client = try await daemon.connect()
        client.timeout = .seconds(10)
        #expect(try await client.scene("big")["path"] != nil)

        for burst in 0..<3 {
            // About 13.5 KB per answer: the fifth passes 65,536 bytes (the least bound there is), and it is the last
            // of the burst.
            let lines = (1...5).map { SocketClient.line(id: 100 * burst + $0, "get", ["scene": #""big""#]) }
            try await client.send(raw: lines.joined())
            for _ in 1...5 {
                let answer = try await client.readLine("an answer of the burst")
                #expect(answer.contains(#""ok":true"#), "\(answer.prefix(120))")
            }
            // The next request is read, served and answered.
            #expect(try await client.ok("list")["scenes"] != nil, "burst \(burst): the connection went deaf")
        }
    }
}
