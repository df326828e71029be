import SceneSyncCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `core` scenario: a `SceneStore` of many realistic scenes, then the cost of merging one change into it and
/// the memory each scene takes compared with its scene file.
struct CoreBenchmark {
    let options: BenchOptions

    static let origin = Origin(source: .client, client: "scenesync-bench", uid: 1000, pid: 4242)

    func run() {
        var rng = SplitMix64(seed: options.store.seed)
        let generator = SceneGenerator()

        // Build the store the way the daemon does on start: every scene file read and merged.
        var ids: [SceneID] = []
        let sceneCount = options.store.scenes?.first ?? 100_000
        ids.reserveCapacity(sceneCount)
        let rssBefore = residentBytes()
        let buildStart = ContinuousClock.now
        var store = SceneStore(epoch: "bench")
        var fileBytesTotal = 0
        for index in 0..<sceneCount {
            guard let id = SceneID("window-\(index)") else { continue }
            let bytes = generator.file(&rng)
            fileBytesTotal += bytes.count
            if case .changed = store.applyFile(id, bytes: bytes) { ids.append(id) }
        }
        let buildTime = ContinuousClock.now - buildStart
        let rssAfter = residentBytes()
        guard !ids.isEmpty else {
            printError("scenesync-bench: no scene was accepted")
            exit(1)
        }
        var retainedTotal = 0
        for id in ids { retainedTotal += store.scene(id)?.retainedBytes ?? 0 }
        let codable = ids.filter { store.scene($0)?.format == .codable }.count

        let report = Report(json: options.json)
        report.header(
            "core: \(ids.count) scenes (depth 1–8, \(percent(codable, of: ids.count)) % codable), "
                + "built in \(fixed(seconds(buildTime), 2)) s; \(options.store.operations) timed operations each")

        // Merges. Every measurement picks random scenes; inputs are prepared outside the timed region.
        report.mergeHeader()
        var pushes: [Duration] = []
        var echoes: [Duration] = []
        for round in 0..<(options.store.operations + options.store.operations / 10) {
            let id = ids[rng.below(ids.count)]
            guard let state = store.scene(id) else { continue }
            let element = generator.element(for: state.format, &rng)
            let start = ContinuousClock.now
            let plan: SceneStore.Plan
            do throws(SceneSyncError) {
                plan = try store.plan(.push([element]), on: id, origin: Self.origin)
            } catch let error where error.code == .tooLarge {
                continue  // with few scenes, one pushed to often enough reaches a size limit: that round is not timed
            } catch {
                printError("scenesync-bench: push refused: \(error)")
                exit(1)
            }
            store.commit(plan)
            let end = ContinuousClock.now
            // The daemon's own write comes back through the watcher.
            guard let written = plan.fileBytes else { continue }
            let echoStart = ContinuousClock.now
            let outcome = store.applyFile(id, bytes: written)
            let echoEnd = ContinuousClock.now
            guard outcome == .unchanged else {
                printError("scenesync-bench: own write read back as \(outcome)")
                exit(1)
            }
            // The first tenth warms up.
            if round >= options.store.operations / 10 {
                pushes.append(end - start)
                echoes.append(echoEnd - echoStart)
            }
        }
        report.merge("plan+commit push", pushes)

        var sets: [Duration] = []
        for round in 0..<(options.store.operations + options.store.operations / 10) {
            let id = ids[rng.below(ids.count)]
            guard let state = store.scene(id) else { continue }
            let path = generator.path(state.format, depth: 1 + rng.below(8), &rng)
            let start = ContinuousClock.now
            let plan: SceneStore.Plan
            do throws(SceneSyncError) {
                plan = try store.plan(.set(path: path, format: nil), on: id, origin: Self.origin)
            } catch {
                printError("scenesync-bench: set refused: \(error)")
                exit(1)
            }
            store.commit(plan)
            let end = ContinuousClock.now
            if round >= options.store.operations / 10, !plan.isNoOp { sets.append(end - start) }
        }
        report.merge("plan+commit set", sets)

        var files: [Duration] = []
        for round in 0..<(options.store.operations + options.store.operations / 10) {
            let id = ids[rng.below(ids.count)]
            guard let state = store.scene(id) else { continue }
            // The app pushed a view: the file it writes holds one more element.
            let bytes = generator.file(state.path + [generator.element(for: state.format, &rng)], state.format)
            let start = ContinuousClock.now
            let outcome = store.applyFile(id, bytes: bytes)
            let end = ContinuousClock.now
            guard case .changed = outcome else {
                printError("scenesync-bench: changed file merged as \(outcome)")
                exit(1)
            }
            if round >= options.store.operations / 10 { files.append(end - start) }
        }
        report.merge("applyFile changed file", files)
        report.merge("applyFile own write (unchanged)", echoes)

        // Memory, measured right after the build (before the merges grew the paths and the history).
        report.memory(
            scenes: ids.count, fileBytes: fileBytesTotal, retainedBytes: retainedTotal,
            rssBytes: max(0, rssAfter - rssBefore))
        withExtendedLifetime(store) {}
    }
}

// MARK: - Scene generation

/// Realistic navigation paths: depth 1–8, 80 % codable with mixed tags, items like the ones apps encode.
struct SceneGenerator {
    static let tags = [
        "MyApp.Recipe", "MyApp.Category", "Swift.Int", "Swift.String", "NavigationBackportApp.EmojiVisualisation",
        "Swift.Array<Swift.Int>",
    ]

    func itemText(tag: String?, _ rng: inout SplitMix64) -> String {
        let n = rng.below(10_000)
        switch tag {
        case "MyApp.Category": return #"{"id":\#(n % 50),"name":"Category \#(n % 50)"}"#
        case "Swift.Int": return "\(n)"
        case "Swift.String": return #""Recipe \#(n % 100)""#
        case "NavigationBackportApp.EmojiVisualisation": return #"{"emoji":"🎈","count":\#(n % 100)}"#
        case "Swift.Array<Swift.Int>": return "[\(n % 10),\(n % 7),\(n % 3)]"
        default: return #"{"id":\#(n),"title":"Recipe \#(n % 100)"}"#
        }
    }

    func element(for format: SceneFormat, _ rng: inout SplitMix64) -> Element {
        let tag = format == .codable ? rng.pick(Self.tags) : nil
        let text = itemText(tag: tag, &rng)
        // `itemText` only makes valid JSON: `.null` merely keeps this total.
        guard let value = try? JSONParser.parse(Array(text.utf8)) else { return Element(tag: tag, value: .null) }
        return Element(tag: tag, value: value)
    }

    func path(_ format: SceneFormat, depth: Int, _ rng: inout SplitMix64) -> [Element] {
        (0..<depth).map { _ in element(for: format, &rng) }
    }

    /// A scene file as `JSONEncoder` writes it.
    func file(_ rng: inout SplitMix64) -> [UInt8] {
        let format: SceneFormat = rng.below(100) < 80 ? .codable : .array
        return file(path(format, depth: 1 + rng.below(8), &rng), format)
    }

    func file(_ path: [Element], _ format: SceneFormat) -> [UInt8] {
        SceneFileCodec.encode(path, as: format)
    }
}

/// SplitMix64: small, fast and deterministic.
struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }
}

// MARK: - Reporting

struct Report {
    let json: Bool

    func header(_ text: String) {
        if !json { print("scenesync-bench \(text)\n") }
    }

    func mergeHeader() {
        if !json { print(pad("merge one change", 34) + lpad("mean µs", 10) + lpad("p50 µs", 10) + lpad("p99 µs", 10)) }
    }

    func merge(_ name: String, _ samples: [Duration]) {
        guard !samples.isEmpty else { return }
        let micros = samples.map { seconds($0) * 1e6 }.sorted()
        let mean = micros.reduce(0, +) / Double(micros.count)
        let p50 = micros[micros.count / 2]
        let p99 = micros[min(micros.count - 1, micros.count * 99 / 100)]
        if json {
            print(
                #"{"scenario":"core","metric":"merge","operation":"\#(name)","mean_us":\#(fixed(mean, 3)),"#
                    + #""p50_us":\#(fixed(p50, 3)),"p99_us":\#(fixed(p99, 3)),"samples":\#(micros.count)}"#)
        } else {
            print(pad(name, 34) + lpad(fixed(mean, 2), 10) + lpad(fixed(p50, 2), 10) + lpad(fixed(p99, 2), 10))
        }
    }

    func memory(scenes: Int, fileBytes: Int, retainedBytes: Int, rssBytes: Int) {
        let file = Double(fileBytes) / Double(scenes)
        let retained = Double(retainedBytes) / Double(scenes)
        let rss = Double(rssBytes) / Double(scenes)
        if json {
            print(
                #"{"scenario":"core","metric":"memory","scenes":\#(scenes),"file_bytes_per_scene":\#(fixed(file, 1)),"#
                    + #""retained_bytes_per_scene":\#(fixed(retained, 1)),"retained_ratio":\#(fixed(retained / file, 3)),"#
                    + #""rss_bytes_per_scene":\#(fixed(rss, 1)),"rss_ratio":\#(fixed(rss / file, 3))}"#)
        } else {
            print("\n" + pad("memory per scene", 34) + lpad("bytes", 10) + lpad("× file", 10))
            print(pad("scene file (JSON)", 34) + lpad(fixed(file, 1), 10) + lpad("1.00", 10))
            print(
                pad("SceneState.retainedBytes", 34) + lpad(fixed(retained, 1), 10) + lpad(fixed(retained / file, 2), 10)
            )
            print(pad("RSS growth while building", 34) + lpad(fixed(rss, 1), 10) + lpad(fixed(rss / file, 2), 10))
        }
    }
}

/// Writes to standard error (the C `stderr` global is not concurrency-safe in Swift 6).
func printError(_ text: String) {
    var bytes = Array(text.utf8)
    if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        if written <= 0 { return }
        offset += written
    }
}

func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}

func lpad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

/// `value` with exactly `decimals` digits after the point, without Foundation.
func fixed(_ value: Double, _ decimals: Int) -> String {
    var scale: Int64 = 1
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int64((abs(value) * Double(scale)).rounded())
    let fraction = String(scaled % scale)
    let digits = decimals == 0 ? "" : "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    return (value < 0 && scaled != 0 ? "-" : "") + String(scaled / scale) + digits
}

func seconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) + Double(attoseconds) / 1e18
}

func percent(_ part: Int, of whole: Int) -> Int { whole == 0 ? 0 : (part * 100 + whole / 2) / whole }

/// Resident set size from `/proc/self/statm` (Linux), 0 where unavailable.
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 256)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return 0 }
    let fields = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        .split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
