#if canImport(Glibc)
import Glibc
#endif

/// Replaces scene files the way an app saves its navigation path: write a temp file, then `rename` it over the
/// scene file. Sequence `s` goes to file `(s - 1) % files` and is stamped just before its `rename`.
final class SceneFileWriter {
    let directory: String
    let files: Int
    let stamps: StampTable
    /// The newest sequence written to each file, set before its `rename`: watchman reports names only.
    let latest: StampTable
    private var tempPaths: [[CChar]] = []
    private var finalPaths: [[CChar]] = []
    private var content: [UInt8] = []
    private(set) var written = 0
    private(set) var failures = 0
    private(set) var cpuNanoseconds: Int64 = 0
    /// The scene names' prefix: a run that reuses a directory writes new scenes, so that a write whose bytes
    /// equal an earlier run's is still a change.
    let prefix: String

    init(directory: String, files: Int, stamps: StampTable, prefix: String = "latency") {
        self.directory = directory
        self.files = files
        self.stamps = stamps
        self.prefix = prefix
        latest = StampTable(capacity: files)
        for file in 0..<files {
            tempPaths.append(Array("\(directory)/.\(prefix)-\(file).json.bench.tmp".utf8CString))
            finalPaths.append(Array("\(directory)/\(prefix)-\(file).json".utf8CString))
        }
    }

    func scene(_ file: Int) -> String { "\(prefix)-\(file)" }

    /// Creates every file with an empty path, so that the timed writes are changes of existing scenes.
    func createAll() throws(BenchError) {
        for file in 0..<files {
            guard replace(file, with: Array("[]".utf8)) else {
                throw .system("write \(directory)/\(scene(file)).json", errno)
            }
        }
    }

    /// Writes sequence `sequence` (its file's content: a two-element array path ending in the stamp).
    @discardableResult
    func write(sequence: Int) -> Bool {
        let file = (sequence - 1) % files
        content.removeAll(keepingCapacity: true)
        content.append(contentsOf: #"[{"id":3,"name":"Category 3"},{"s":"#.utf8)
        ChangeDriver.appendInt(sequence, to: &content)
        content.append(contentsOf: #","f":"#.utf8)
        ChangeDriver.appendInt(file, to: &content)
        content.append(contentsOf: "}]".utf8)
        let ok = replace(file, with: content, stamp: sequence)
        if ok { written += 1 } else { failures += 1 }
        return ok
    }

    /// One write every `1/rate` s on an absolute schedule, `count` writes. `sample` runs about every 100 ms.
    func runPaced(rate: Int, count: Int, sample: () -> Void = {}) {
        let cpuStart = Monotonic.threadCPU()
        defer { cpuNanoseconds += Monotonic.threadCPU() - cpuStart }
        let interval = 1e9 / Double(max(1, rate))
        let start = Monotonic.now()
        var nextSample = start
        for sequence in 1...max(1, count) {
            Monotonic.sleep(until: start + Int64(Double(sequence - 1) * interval))
            write(sequence: sequence)
            if Monotonic.now() >= nextSample {
                sample()
                nextSample += 100_000_000
            }
        }
    }

    /// The last sequence written to each file (the virtual `f + 1 - files` for a file never written).
    func finalSequences(count: Int) -> [Int] {
        (0..<files).map { file in
            let writes = count > file ? (count - 1 - file) / files : -1
            return file + 1 + writes * files
        }
    }

    private func replace(_ file: Int, with bytes: [UInt8], stamp sequence: Int? = nil) -> Bool {
        let fd = open(tempPaths[file], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        let ok = bytes.withUnsafeBytes { BenchDaemon.writeAll(fd, $0) }
        close(fd)
        guard ok else { return false }
        if let sequence {
            latest.set(file, Int64(sequence))
            stamps.set(sequence, Monotonic.now())
        }
        return rename(tempPaths[file], finalPaths[file]) == 0
    }
}
