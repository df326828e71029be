/// A run of consecutive scene entries of a snapshot's `scenes` array, decoded on one thread.
///
/// A restore splits the array where the encoder starts a line with an entry (`,` newline `{`), without reading the
/// entries first, and decodes the runs on every core. A raw newline is never inside a JSON string, but a scene file
/// laid out over lines can hold one between its own tokens; so a split may fall inside an entry. The runs are then
/// joined in order from the array's first entry: a run is taken only if it starts exactly where the run before it
/// stopped, which is an entry's start; any other is decoded again from there, on the joining thread.
public struct SceneRun: Sendable {
    /// The entries decoded, in order.
    let scenes: [SceneState]
    /// Where the run stopped: the first entry at or after the next run's start, or just after the array's `]`.
    let next: Int
    /// The run reached the array's end.
    let closed: Bool
}

extension Snapshot {
    /// About how many bytes of entries one run holds: a few thousand scenes, enough runs for every core to be busy
    /// until the end and few enough that starting one costs nothing worth counting.
    static let defaultRunBytes = 1 << 19

    /// The scenes of the array whose `[` is at `start`, and where the array ends.
    static func decodeScenes(
        _ bytes: [UInt8], arrayAt start: Int, runBytes: Int,
        mapChunks: (_ count: Int, _ body: @Sendable (Int) -> Result<SceneRun, SnapshotError>) -> [Result<
            SceneRun, SnapshotError
        >]
    ) -> Result<SceneRun, SnapshotError> {
        var parser = JSONParser(bytes, maxNesting: snapshotNesting)
        parser.index = start + 1
        parser.skipWhitespace()
        if parser.peek() == UInt8(ascii: "]") {
            return .success(SceneRun(scenes: [], next: parser.index + 1, closed: true))
        }
        let starts = runStarts(bytes, from: parser.index, every: runBytes)
        // Each run's stop is the next run's start; the last one's is the array's end, wherever it is.
        let stops = Array(starts.dropFirst()) + [Int.max]
        let runs = mapChunks(starts.count) { run in decodeRun(bytes, from: starts[run], upTo: stops[run]) }
        guard runs.count == starts.count else {
            preconditionFailure("mapChunks returned \(runs.count) results for \(starts.count) runs")
        }
        var scenes: [SceneState] = []
        var position = starts[0]
        for run in starts.indices {
            let decoded = starts[run] == position ? runs[run] : decodeRun(bytes, from: position, upTo: stops[run])
            switch decoded {
            case .failure(let error):
                // Every entry before it decoded: this is the first error in the document.
                return .failure(error)
            case .success(let decoded):
                scenes.append(contentsOf: decoded.scenes)
                position = decoded.next
                if decoded.closed { return .success(SceneRun(scenes: scenes, next: position, closed: true)) }
            }
        }
        preconditionFailure("the last run has no stop: it closes the array or fails")
    }

    /// The entries from `start` (an entry's `{`) on, until the first entry at or after `stop`, or the array's end.
    static func decodeRun(_ bytes: [UInt8], from start: Int, upTo stop: Int) -> Result<SceneRun, SnapshotError> {
        var scenes: [SceneState] = []
        scenes.reserveCapacity(min(4096, max(0, stop - start) / 128))
        var parser = JSONParser(bytes, maxNesting: snapshotNesting)
        parser.index = start
        do throws(SnapshotError) {
            while parser.index < stop {
                let (scene, end) = try decodeScene(bytes, at: parser.index)
                scenes.append(scene)
                parser.index = end
                parser.skipWhitespace()
                switch parser.peek() {
                case UInt8(ascii: ","):
                    parser.index += 1
                    parser.skipWhitespace()
                case UInt8(ascii: "]"):
                    return .success(SceneRun(scenes: scenes, next: parser.index + 1, closed: true))
                default:
                    throw .unreadable("scenes: \(parser.unexpected("',' or ']'"))")
                }
            }
            return .success(SceneRun(scenes: scenes, next: parser.index, closed: false))
        } catch {
            return .failure(error)
        }
    }

    /// Where each run starts: `first`, then the `{` of a `,` newline `{` at or after every `runBytes` bytes.
    static func runStarts(_ bytes: [UInt8], from first: Int, every runBytes: Int) -> [Int] {
        var starts = [first]
        bytes.withUnsafeBufferPointer { bytes in
            var index = first + max(1, runBytes)
            while index < bytes.count - 1 {
                if bytes[index] == 0x0A, bytes[index + 1] == UInt8(ascii: "{"), bytes[index - 1] == UInt8(ascii: ",") {
                    starts.append(index + 1)
                    index += 1 + max(1, runBytes)
                } else {
                    index += 1
                }
            }
        }
        return starts
    }
}
