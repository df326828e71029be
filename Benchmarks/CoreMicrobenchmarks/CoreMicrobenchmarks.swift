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

/// A store of `sceneCount` scenes, built outside the measured region.
private func makeStore() -> (SceneStore, [SceneID]) {
    var store = SceneStore(epoch: "microbench")
    var ids: [SceneID] = []
    for index in 0..<sceneCount {
        guard let id = SceneID("window-\(index)") else { continue }
        if case .changed = store.applyFile(id, bytes: sceneFile(index, depth: 1 + index % 8)) { ids.append(id) }
    }
    return (store, ids)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.instructions, .mallocCountTotal, .wallClock, .throughput],
        warmupIterations: 100,
        maxDuration: .seconds(2),
        maxIterations: 20_000
    )

    Benchmark("SceneStore plan+commit push") { benchmark in
        var (store, ids) = makeStore()
        let pushes = (0..<benchmark.scaledIterations.count).map { element($0) }
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            let id = ids[index % ids.count]
            if let plan = try? store.plan(.push([pushes[index]]), on: id, origin: origin) {
                blackHole(store.commit(plan))
            }
        }
    }

    Benchmark("SceneStore applyFile changed") { benchmark in
        var (store, ids) = makeStore()
        let files = (0..<benchmark.scaledIterations.count).map { sceneFile($0 &+ 1_000_000, depth: 1 + $0 % 8) }
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            blackHole(store.applyFile(ids[index % ids.count], bytes: files[index]))
        }
    }

    Benchmark("SceneStore applyFile unchanged (own write)") { benchmark in
        var (store, ids) = makeStore()
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            let id = ids[index % ids.count]
            let file = sceneFile(index % sceneCount, depth: 1 + (index % sceneCount) % 8)
            blackHole(store.applyFile(id, bytes: file))
        }
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
        var (store, ids) = makeStore()
        guard let id = ids.first, let plan = try? store.plan(.push([element(7)]), on: id, origin: origin),
            let record = store.commit(plan)
        else { return }
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            out.removeAll(keepingCapacity: true)
            Wire.appendChangeRecord(record, to: &out)
            blackHole(out.count)
        }
    }
}
