import Foundation

/// Standard input's lines as an async sequence. `readLine()` blocks, so it runs on a thread of its own rather than
/// on one of the few threads that run Swift's tasks; at most a few lines wait for the app to take them.
enum StandardInput {
    static func lines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(16))
        let reader = Thread {
            while let line = readLine() {
                // A full buffer means the app is busy: wait for room rather than drop what the user typed.
                while case .dropped = continuation.yield(line) { usleep(10_000) }
            }
            continuation.finish()
        }
        reader.start()
        return stream
    }
}
