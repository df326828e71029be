import Foundation
import SceneSyncCore
import Testing

/// Parses JSON text written in a test, to compare with what the daemon sent by the contract's equality (key order,
/// whitespace and number spelling do not matter).
func json(_ text: String) throws -> JSONValue {
    do {
        return try JSONParser.parse(Array(text.utf8))
    } catch {
        throw SocketClient.ClientError.unexpected("not JSON in the test itself: \(text)")
    }
}

extension SocketClient {
    /// Sends a request that must succeed and returns its response; a failure throws with the daemon's answer, so
    /// a test never goes on from a state it did not reach.
    @discardableResult
    func ok(_ op: String, _ fields: [String: String] = [:]) async throws -> JSONValue {
        let response = try await request(op, fields)
        guard response.isOK else {
            throw ClientError.unexpected("\(op) failed: \(String(decoding: response.serialized(), as: UTF8.self))")
        }
        return response
    }

    /// The `sync` barrier: returns once every scene-file change made before it has been merged, with the revision
    /// it answered. The events queued before its response are in `takeEvents()` afterwards.
    @discardableResult
    func sync() async throws -> UInt64 {
        try #require(try await ok("sync")["revision"]?.uint64Value)
    }

    /// Subscribes and returns the subscription's id. The catch-up events (up to `synced`) are left to the caller.
    @discardableResult
    func subscribe(
        _ patterns: [String]? = nil, since: (epoch: String, revision: UInt64)? = nil, initial: Bool? = nil
    )
        async throws -> UInt64
    {
        var fields: [String: String] = [:]
        if let patterns { fields["scenes"] = "[" + patterns.map(J.string).joined(separator: ",") + "]" }
        if let since { fields["since"] = #"{"epoch":\#(J.string(since.epoch)),"revision":\#(since.revision)}"# }
        if let initial { fields["initial"] = initial ? "true" : "false" }
        return try #require(try await ok("subscribe", fields)["subscription"]?.uint64Value)
    }

    /// `get` of a scene that must exist.
    func scene(_ id: String) async throws -> JSONValue {
        try await ok("get", ["scene": J.string(id)])
    }

    /// The epoch and revision `hello` reports.
    func clock() async throws -> (epoch: String, revision: UInt64) {
        let hello = try await ok("hello")
        return (try #require(hello["epoch"]?.stringValue), try #require(hello["revision"]?.uint64Value))
    }

    /// One `stats` counter.
    func stat(_ name: String) async throws -> Int64 {
        try #require(try await ok("stats")[name]?.int64Value, "stats has no \(name)")
    }

    /// One of the counters that a daemon of a test build under test hooks reports in `stats.test` (`group_commits`,
    /// `writer_waits`, `stall_closes`): moments a test waits for instead of guessing them by timing.
    func testCounter(_ name: String) async throws -> Int64 {
        let stats = try await ok("stats")
        return try #require(stats["test"]?[name]?.int64Value, "stats.test has no \(name): \(stats.text)")
    }

    /// Waits until the test counter `name` is above `value`; fails the test after `timeout`.
    func waitForTestCounter(_ name: String, above value: Int64, timeout: Duration = .seconds(30)) async throws {
        let reached = try await eventually(timeout: timeout) { try await testCounter(name) > value }
        try #require(reached, "stats.test.\(name) stayed at \(value) for \(timeout)")
    }
}

extension JSONValue {
    /// The event's name, for events read from the socket.
    var eventName: String? { self["event"]?.stringValue }

    /// The revision of a `change` or `synced` event (or of a response).
    var revision: UInt64? { self["revision"]?.uint64Value }

    /// The members of a scene on the wire (§6), without the response's `id`, `ok` and clock: what must survive a
    /// restart unchanged.
    var sceneMembers: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for key in ["scene", "version", "created", "modified", "format", "path", "phase"] { members[key] = self[key] }
        return members
    }

    /// The text, for messages in test failures.
    var text: String { String(decoding: serialized(), as: UTF8.self) }
}

extension [JSONValue] {
    /// The events named `name`, in order.
    func named(_ name: String) -> [JSONValue] { filter { $0.eventName == name } }
}

extension DaemonProcess {
    func sceneFile(_ id: String) -> URL { scenes.appendingPathComponent("\(id).json") }

    /// The scene file's exact bytes, or nil when it does not exist.
    func sceneBytes(_ id: String) -> [UInt8]? {
        (try? Data(contentsOf: sceneFile(id))).map { Array($0) }
    }

    /// Replaces the configuration file (for `reload` and `SIGHUP`).
    func writeConfig(_ text: String) throws {
        try text.write(to: configFile, atomically: true, encoding: .utf8)
    }

    /// The parsed snapshot file `name` in the state directory.
    func snapshot(_ name: String) throws -> JSONValue {
        let data = try Data(contentsOf: state.appendingPathComponent("snapshots/\(name)"))
        return try JSONParser.parse(Array(data))
    }
}

/// Runs one line-protocol exchange as user `nobody` through `setpriv` and `socat`: the requests go in, the socket is
/// half-closed, and every line the daemon answered comes back. For the `forbidden` checks, which need a peer that is
/// neither root nor the daemon's user.
func exchangeAsNobody(socket path: String, requests: [String]) async throws -> [JSONValue] {
    let setpriv = try #require(HostCommand.find("setpriv"), "setpriv (util-linux) is needed to run a client as nobody")
    let socat = try #require(HostCommand.find("socat"), "socat is needed to run a client as nobody")
    let scratch = try TemporaryDirectory("nob")
    defer { scratch.remove() }
    let input = scratch.appending("in")
    let output = scratch.appending("out")
    let errors = scratch.appending("err")
    try Data(requests.map { $0 + "\n" }.joined().utf8).write(to: input)
    let process = try ChildProcess(
        setpriv,
        ["--reuid=65534", "--regid=65534", "--clear-groups", socat, "-t", "10", "-", "UNIX-CONNECT:\(path)"],
        environment: ProcessInfo.processInfo.environment, stdin: .file(input.path), stdout: .file(output.path),
        stderr: .file(errors.path))
    let termination = try await process.exit(timeout: .seconds(60))
    guard termination == .exited(0) else {
        let errorText = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        throw SocketClient.ClientError.unexpected("socat as nobody failed (\(termination)): \(errorText)")
    }
    let data = (try? Data(contentsOf: output)) ?? Data()
    return try String(decoding: data, as: UTF8.self).split(separator: "\n").map { try json(String($0)) }
}
