import Foundation
import SceneSyncCore
import Testing

/// SIGKILL at random points while apps write files and clients make changes (§4, §5): the revision never goes back,
/// the epoch changes, every scene equals its file after the restart, and no acknowledged client change is lost.
@Suite struct FaultKillTests {
    static let fileScenes = (0..<3).map { "file\($0)" }
    static let clientScenes = (0..<3).map { "client\($0)" }
    /// Written by the app and changed by the client.
    static let shared = "shared"

    /// A client pipelining `set`s in batches until its connection breaks; what it sent and what was acknowledged.
    final class Changer: @unchecked Sendable {
        struct Sent: Sendable {
            var scene: String
            var value: Int
            var sent: ContinuousClock.Instant
            var revision: UInt64?
        }

        let sent = AsyncVariable<[Sent]>([])
        /// The highest revision acknowledged so far.
        let acknowledged = AsyncVariable<UInt64>(0)

        func run(_ client: SocketClient, firstValue: Int) async {
            var value = firstValue
            while true {
                var batch: [(id: Int, index: Int)] = []
                do {
                    for _ in 0..<32 {
                        value += 1
                        let scene =
                            value.isMultiple(of: 8) ? FaultKillTests.shared : FaultKillTests.clientScenes[value % 3]
                        let index = sent.update {
                            $0.append(Sent(scene: scene, value: value, sent: .now))
                            return $0.count - 1
                        }
                        let id = try await client.send(
                            "set", ["scene": J.string(scene), "path": #"[{"value":{"c":\#(value)}}]"#])
                        batch.append((id, index))
                    }
                    for (id, index) in batch {
                        let response = try await client.response(to: id)
                        guard let revision = response.revision, response.isOK else { continue }
                        sent.update { $0[index].revision = revision }
                        acknowledged.update { $0 = max($0, revision) }
                    }
                } catch {
                    return
                }
            }
        }

        static func value(ofFile bytes: [UInt8]?) -> (client: Int?, app: Int?) {
            guard let bytes, let element = (try? JSONParser.parse(bytes))?.arrayValue?.first else { return (nil, nil) }
            return (element["c"]?.int64Value.map(Int.init), element["w"]?.int64Value.map(Int.init))
        }
    }

    static let revisionBlock: UInt64 = 64

    @Test func sigkillAtRandomPointsLosesNothingAcknowledged() async throws {
        var random = SeededRandom(seed: Fault.seed)
        // Round 1 is the one that crosses a revision block: there is always a round 1.
        let rounds = max(Fault.rounds(5), 2)
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        // Blocks of 64 revisions (a debug override of 4,096): every round crosses several before its kill.
        daemon.extraEnvironment["SCENESYNC_TEST_REVISION_BLOCK"] = "\(Self.revisionBlock)"
        try await daemon.start()
        var value = 0
        var writeNumber = 0

        for round in 0..<rounds {
            let context = "round \(round), seed \(Fault.seed)"
            let client = try await daemon.connect()
            let before = try await client.clock()
            // One round runs past a block of reserved revisions before the kill, whatever the random moment.
            let crossesBlock = round == 1
            let changer = Changer()
            let firstValue = value
            let changes = Task { await changer.run(client, firstValue: firstValue) }
            let writer = SceneWriter(
                directory: daemon.scenes.path, scenes: Self.fileScenes + [Self.shared], firstNumber: writeNumber)
            if crossesBlock {
                let target = before.revision + Self.revisionBlock + UInt64.random(in: 1...30, using: &random)
                _ = try await changer.acknowledged.wait(
                    for: "revision \(target) (past a reservation block)", until: .now + .seconds(180)
                ) { $0 >= target ? true : nil }
            } else {
                // Where the kill lands is the point of the test: a random moment of the storm.
                try await Task.sleep(for: .milliseconds(Int.random(in: 10...400, using: &random)))
            }
            let termination = try await daemon.stopped(SIGKILL)
            #expect(termination == .signaled(SIGKILL), "\(context)")
            let writes = try await writer.stop()
            writeNumber += writes.count + 1
            await changes.value
            let sent = changer.sent.value
            value += sent.count + 1
            let told = max(changer.acknowledged.value, before.revision)

            try await daemon.start()
            let again = try await daemon.connect()
            let after = try await again.clock()
            #expect(after.epoch != before.epoch, "\(context): a crash must start a new epoch")
            #expect(after.revision >= told, "\(context): revision went back from \(told) to \(after.revision)")
            try await again.sync()

            // Every scene equals its file, and every file is a scene.
            let listed = try #require(try await again.ok("list")["scenes"]?.arrayValue).compactMap {
                $0["scene"]?.stringValue
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: daemon.scenes.path)
                .filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.map { String($0.dropLast(5)) }
            #expect(Set(listed) == Set(files), "\(context): scenes \(listed.sorted()) vs files \(files.sorted())")
            for scene in listed {
                let bytes = try #require(daemon.sceneBytes(scene), "\(context): \(scene) has no file")
                #expect(
                    try await again.scene(scene)["path"] == Fault.wirePath(ofArrayFile: bytes),
                    "\(context): \(scene)'s state is not its file \(String(decoding: bytes, as: UTF8.self))")
            }

            // No acknowledged client change is lost: each scene holds its last acknowledged change, or a later one
            // (a change sent after it, still unanswered at the kill, or an app write completed after it was sent).
            for scene in Self.clientScenes + [Self.shared] {
                let ofScene = sent.filter { $0.scene == scene }
                guard let lastAcknowledged = ofScene.lastIndex(where: { $0.revision != nil }) else { continue }
                let acknowledged = ofScene[lastAcknowledged]
                var allowed = Set(ofScene[lastAcknowledged...].map { "c\($0.value)" })
                if scene == Self.shared {
                    for write in writes where write.scene == scene && write.completed >= acknowledged.sent {
                        allowed.insert("w" + write.content.filter(\.isNumber))
                    }
                }
                let (clientValue, appValue) = Changer.value(ofFile: daemon.sceneBytes(scene))
                let found = clientValue.map { "c\($0)" } ?? appValue.map { "w\($0)" } ?? "nothing"
                let lost = "the change c\(acknowledged.value) acknowledged at r\(acknowledged.revision ?? 0) is lost"
                #expect(allowed.contains(found), "\(context): \(scene) holds \(found); \(lost)")
            }
        }
    }
}
