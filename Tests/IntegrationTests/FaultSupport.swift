import Foundation
import SceneSyncCore
import Testing

/// What the fault suite (`Fault*Tests`) shares: round counts, a reproducible random source, an app-like file writer
/// on a thread of its own, and readings from `/proc`.
enum Fault {
    /// How many rounds a randomized fault test runs: `SCENESYNC_FAULT_ROUNDS` when set (for long soak runs), else
    /// `ciDefault`, sized so that `make test` stays within its budget on two cores.
    static func rounds(_ ciDefault: Int) -> Int {
        ProcessInfo.processInfo.environment["SCENESYNC_FAULT_ROUNDS"].flatMap(Int.init).map { max($0, 1) }
            ?? ciDefault
    }

    /// The seed of this run's random choices: `SCENESYNC_FAULT_SEED` to replay a failure, else a fresh one. Every
    /// failure message of a randomized test names it.
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["SCENESYNC_FAULT_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 1...UInt64.max)

    /// `VmRSS` of `pid` in bytes, from `/proc/PID/status`.
    static func rss(of pid: pid_t) -> Int? {
        statusField("VmRSS", of: pid).flatMap { Int($0.split(separator: " ").first ?? "") }.map { $0 * 1024 }
    }

    /// The signals `pid` blocks, catches or ignores (`SigBlk`, `SigCgt`, `SigIgn` of `/proc/PID/status`): a signal
    /// in none of them still has its default action, which means the daemon's own code has not run yet (the
    /// dynamic loader and the runtime's start-up come first).
    static func handles(_ signal: Int32, pid: pid_t) -> Bool? {
        var any = false
        for field in ["SigBlk", "SigCgt", "SigIgn"] {
            guard let text = statusField(field, of: pid), let mask = UInt64(text, radix: 16) else { return nil }
            if mask & (1 << UInt64(signal - 1)) != 0 { any = true }
        }
        return any
    }

    private static func statusField(_ name: String, of pid: pid_t) -> String? {
        // Read to the end: /proc files report a size of 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/status") else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// The wire path (§6) of an array-format scene file's content: each value becomes `{"value": …}`.
    static func wirePath(ofArrayFile bytes: [UInt8]) -> JSONValue? {
        guard let elements = (try? JSONParser.parse(bytes))?.arrayValue else { return nil }
        return .array(elements.map { .object(JSONObject([("value", $0)])) })
    }
}

/// SplitMix64: a small, seedable generator, so that a failing run can be replayed with `SCENESYNC_FAULT_SEED`.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// An app writing scene files as fast as it can, on a dedicated thread (its system calls never hold a pool
/// thread), alternating atomic replacement (temp file, rename) and in-place rewrites. Every content is unique
/// (`[{"w":N}]`), so whatever the daemon reports can be traced to one write.
final class SceneWriter: @unchecked Sendable {
    struct Write: Sendable {
        var scene: String
        var content: String
        /// When the write was complete (renamed into place, or closed).
        var completed: ContinuousClock.Instant
    }

    private let lock = NSLock()
    private var stopped = false
    private var writes: [Write] = []
    private let finished = AsyncVariable(false)
    private let directory: String
    private let scenes: [String]
    private let firstNumber: Int

    /// Starts writing to `scenes` in `directory`; contents count up from `firstNumber`.
    init(directory: String, scenes: [String], firstNumber: Int = 0) {
        self.directory = directory
        self.scenes = scenes
        self.firstNumber = firstNumber
        let thread = Thread { [self] in run() }
        thread.name = "scene writer"
        thread.start()
    }

    private var shouldStop: Bool { lock.withLock { stopped } }

    private func run() {
        var number = firstNumber
        while !shouldStop {
            let scene = scenes[number % scenes.count]
            let content = #"[{"w":\#(number)}]"#
            let bytes = Array(content.utf8)
            let path = directory + "/" + scene + ".json"
            if number.isMultiple(of: 2) {
                let temp = directory + "/." + scene + ".json.app.tmp"
                let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                if fd >= 0 {
                    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    close(fd)
                    if rename(temp, path) == 0 { record(scene, content) }
                }
            } else {
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                if fd >= 0 {
                    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    close(fd)
                    if written == bytes.count { record(scene, content) }
                }
            }
            number += 1
        }
        finished.update { $0 = true }
    }

    private func record(_ scene: String, _ content: String) {
        let write = Write(scene: scene, content: content, completed: .now)
        lock.withLock { writes.append(write) }
    }

    /// Stops the writer and returns every completed write, in order.
    func stop() async throws -> [Write] {
        lock.withLock { stopped = true }
        _ = try await finished.wait(for: "the scene writer to stop", until: .now + .seconds(30)) { $0 ? true : nil }
        return lock.withLock { writes }
    }
}
