import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// Everything an `AsyncStream` of a `ScenePath` (``ScenePath/changes``, ``ScenePath/failures``) yields, read by a
/// task of its own as it comes, so that a test waits for what it expects to have been yielded instead of reading at
/// the right moment. One sequence, consumed from its creation until the recorder goes.
final class Recorded<Value: Sendable>: Sendable {
    private let seen = AsyncVariable<[Value]>([])
    private let reader: Task<Void, Never>

    init(_ stream: AsyncStream<Value>) {
        let seen = seen
        reader = Task {
            for await value in stream { seen.update { $0.append(value) } }
        }
    }

    deinit { reader.cancel() }

    /// What was yielded so far, in order.
    var values: [Value] { seen.value }

    /// Waits until `check` holds for what was yielded; throws ``WaitTimeout`` naming `what` after `timeout`.
    func wait(
        for what: @autoclosure () -> String, timeout: Duration = .seconds(30), _ check: @escaping ([Value]) -> Bool
    ) async throws {
        let what = what()
        let values = seen
        _ = try await seen.wait(for: "\(what); seen \(values.value)", until: .now + timeout) {
            check($0) ? true : nil
        }
    }
}

extension Recorded where Value == SceneSyncClientError {
    /// Waits for a failure with `code`, and returns it.
    @discardableResult
    func first(_ code: SceneSyncClientError.Code, timeout: Duration = .seconds(30)) async throws -> SceneSyncClientError
    {
        try await wait(for: "a \(code) failure", timeout: timeout) { $0.contains { $0.code == code } }
        guard let found = values.first(where: { $0.code == code }) else { throw WaitTimeout(what: "\(code)") }
        return found
    }
}

extension RecipeRoute {
    /// The tag SwiftUI (and `ScenePath`) gives these routes in a codable scene.
    static var tag: String { String(reflecting: RecipeRoute.self) }
}

/// A session of an app on `daemon`, reconnecting quickly after a restart.
func appSession(
    _ daemon: DaemonProcess, name: String, requestTimeout: Duration = .seconds(10)
) -> SceneSyncSession {
    SceneSyncSession(
        socketPath: daemon.socketPath, clientName: name, requestTimeout: requestTimeout,
        backoff: ReconnectBackoff(initial: .milliseconds(20), maximum: .milliseconds(200)))
}

extension DaemonProcess {
    /// The scene as the daemon holds it now; nil when it does not exist.
    func currentScene(_ id: String) async throws -> SceneState? {
        try await SceneSyncConnection.withConnection(to: socketPath) { connection in
            do {
                return try await connection.get(id).scene
            } catch let error as SceneSyncError where error.code == .notFound {
                return nil
            }
        }
    }

    /// The scene's change records, oldest first.
    func history(_ id: String) async throws -> [ChangeRecord] {
        try await SceneSyncConnection.withConnection(to: socketPath) { connection in
            try await connection.history(id).reversed()
        }
    }

    /// The daemon's revision now.
    func revision() async throws -> UInt64 {
        try await SceneSyncConnection.withConnection(to: socketPath) {
            try await $0.hello(client: "test").clock.revision
        }
    }

    /// The scene's routes as the daemon holds them, decoded as an app would (codable or array elements).
    func routes(_ id: String) async throws -> [RecipeRoute] {
        guard let scene = try await currentScene(id) else { return [] }
        return try scene.path.map { try JSONDecoder().decode(RecipeRoute.self, from: Data($0.item)) }
    }
}
