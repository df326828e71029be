// The store's hot path on ordo-one/benchmark (`make microbench`): instructions and allocations per operation, which
// stay put on a machine shared with other builds where wall-clock figures do not.
import Benchmark
import SceneSyncCore

/// A deterministic scene file: a codable path of `depth` views, encoded as the app's `JSONEncoder` would.
private func sceneFile(_ seed: Int, depth: Int) -> [UInt8] {
    SceneFileCodec.encode((0..<depth).map { element(seed &* 31 &+ $0) }, as: .codable)
}

private func element(_ n: Int) -> Element {
    let value = (try? JSONParser.parse(Array(#"{"id":\#(n),"title":"Apple pie"}"#.utf8))) ?? .null
    return Element(tag: "MyApp.Recipe", value: value)
}

private let origin = Origin(source: .client, client: "microbench", uid: 1000, pid: 4242)
private let sceneCount = 10_000

/// A store of `sceneCount` scenes, built once per benchmark on first use, outside every measured region: built (and
/// freed) inside the closure, it would be part of each sample.
private final class Fixture: @unchecked Sendable {
    var store = SceneStore(epoch: "microbench")
    var ids: [SceneID] = []
    /// A `set` of four views on the first scene, committed: the record the encoding benchmark writes.
    private(set) lazy var record: ChangeRecord? = {
        guard let id = ids.first,
            let plan = try? store.plan(.set(path: (0..<4).map { element($0) }, format: nil), on: id, origin: origin)
        else { return nil }
        return store.commit(plan)
    }()

    init() {
        for index in 0..<sceneCount {
            guard let id = SceneID("window-\(index)") else { continue }
            if case .changed = store.applyFile(id, bytes: sceneFile(index, depth: 1 + index % 8)) { ids.append(id) }
        }
    }
}

private let pushFixture = Fixture()
private let changedFixture = Fixture()
private let unchangedFixture = Fixture()
private let encodeFixture = Fixture()
private let setFixture = Fixture()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.instructions, .mallocCountTotal, .wallClock],
        warmupIterations: 100,
        maxDuration: .seconds(2),
        maxIterations: 20_000
    )

    Benchmark("SceneStore plan+commit push") { benchmark in
        let fixture = pushFixture
        let pushes = (0..<benchmark.scaledIterations.count).map { element($0) }
        let id = fixture.ids[Int.random(in: 0..<fixture.ids.count)]
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            if let plan = try? fixture.store.plan(.push([pushes[index]]), on: id, origin: origin) {
                blackHole(fixture.store.commit(plan))
            }
        }
        benchmark.stopMeasurement()
        // Back to one view, so that the paths do not grow over the samples.
        if let plan = try? fixture.store.plan(.popToRoot, on: id, origin: origin) { _ = fixture.store.commit(plan) }
    }

    Benchmark("SceneStore applyFile changed") { benchmark in
        let fixture = changedFixture
        let id = fixture.ids[Int.random(in: 0..<fixture.ids.count)]
        // Two different files in turn: each one read is a change.
        let seed = Int.random(in: 1_000_000..<2_000_000)
        let files = [sceneFile(seed, depth: 1 + seed % 8), sceneFile(seed + 1, depth: 1 + seed % 8)]
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            blackHole(fixture.store.applyFile(id, bytes: files[index & 1]))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("SceneStore applyFile unchanged (own write)") { benchmark in
        let fixture = unchangedFixture
        let index = Int.random(in: 0..<fixture.ids.count)
        let file = sceneFile(index, depth: 1 + index % 8)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(fixture.store.applyFile(fixture.ids[index], bytes: file))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("JSONParser.parse scene file (depth 8)") { benchmark in
        let file = sceneFile(42, depth: 8)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? JSONParser.parse(file))
        }
    }

    Benchmark("SceneFileCodec.encode path (depth 8)") { benchmark in
        let path = (0..<8).map { element($0) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(SceneFileCodec.encode(path, as: .codable))
        }
    }

    Benchmark("Wire change event encode") { benchmark in
        // The record is made once, outside every sample: made in the closure, its parse and commit were counted.
        guard let record = encodeFixture.record else { return }
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            out.removeAll(keepingCapacity: true)
            Wire.appendChangeRecord(record, to: &out)
            blackHole(out.count)
        }
        benchmark.stopMeasurement()
    }

    // What a client's `set` costs the store and the wire: plan and commit, the change event's bytes and the answer's
    // (as the daemon builds them: `{"id":…,"ok":true,"scene":…,"version":…,"revision":…}`).
    Benchmark("SceneStore set: plan+commit, event and answer") { benchmark in
        let fixture = setFixture
        let id = fixture.ids[Int.random(in: 0..<fixture.ids.count)]
        let paths = [(0..<4).map { element($0) }, (0..<4).map { element($0 + 100) }]
        let requestID = Array("17".utf8)
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            guard let plan = try? fixture.store.plan(.set(path: paths[index & 1], format: nil), on: id, origin: origin),
                let record = fixture.store.commit(plan)
            else { continue }
            var event: [UInt8] = []
            event.reserveCapacity(512)
            event.append(contentsOf: #"{"event":"change","#.utf8)
            Wire.appendChangeMembers(record, to: &event)
            event.append(contentsOf: "}\n".utf8)
            var answer: [UInt8] = []
            answer.reserveCapacity(128)
            answer.append(contentsOf: #"{"id":"#.utf8)
            answer.append(contentsOf: requestID)
            answer.append(contentsOf: #","ok":true,"scene":"#.utf8)
            JSONWriter.appendString(id.rawValue, to: &answer)
            answer.append(contentsOf: #","version":"#.utf8)
            JSONWriter.appendUInt(record.version, to: &answer)
            answer.append(contentsOf: #","revision":"#.utf8)
            JSONWriter.appendUInt(record.clock.revision, to: &answer)
            answer.append(contentsOf: "}\n".utf8)
            blackHole(event.count + answer.count)
        }
        benchmark.stopMeasurement()
    }
}
