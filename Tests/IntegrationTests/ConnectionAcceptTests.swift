import Foundation
import Testing

/// A daemon out of file descriptors: clients it cannot accept wait in the socket's backlog, the log says why, and
/// they are served as soon as descriptors are free again. Nobody already connected notices.
@Suite struct ConnectionAcceptTests {
    static let hello = #"{"id":1,"op":"hello"}"# + "\n"

    @Test func clientsBeyondTheOpenFileLimitWaitAndAreServedOnceOthersLeave() async throws {
        let prlimit = try #require(HostCommand.find("prlimit"), "prlimit (util-linux) not found")
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        // An idle daemon holds about 20 descriptors: 40 clients are more than the rest of a limit of 48.
        daemon.launcher = [prlimit, "--nofile=48:48", "--"]
        try await daemon.start()
        var clients: [SocketClient] = []
        for _ in 0..<40 {
            let client = try await daemon.connect()
            try await client.send(raw: Self.hello)
            clients.append(client)
        }
        #expect(await daemon.logs("cannot accept a client; trying again shortly"))
        let first = try #require(clients.first)
        #expect(try await first.readMessage("the first client's hello").isOK)
        // Still served while others wait.
        #expect(try await first.request("hello").isOK)

        let last = try #require(clients.last)
        for client in clients.dropFirst().dropLast() { client.close() }
        #expect(try await last.readMessage("the hello of a client that waited to be accepted").isOK)
        let fresh = try await daemon.connect()
        #expect(try await fresh.request("hello").isOK)
    }
}
