import NIOCore
import SceneSyncCore
import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The journal's lines: replaying them into a state, writing a state compactly, and the names of a stream and a
/// boot.
extension ReplicationJournal {

    static func sceneID(_ name: String) -> SceneID? { SceneID(name) }

    /// Replays one line; returns why it is not a line this journal writes, or `nil`. A line that parses but lacks
    /// what its kind needs is damage as much as one that does not parse.
    static func replay(_ json: JSONValue, into state: inout State) -> String? {
        let scene = json["scene"]?.stringValue.flatMap(ReplicationJournal.sceneID)
        switch json["t"]?.stringValue {
        case "stream":
            guard let id = json["id"]?.stringValue else { return "a stream line without its id" }
            state.stream = id
            if let next = json["next"]?.uint64Value { state.nextNumber = max(state.nextNumber, next) }
            if let boot = json["boot"]?.stringValue { state.boot = boot }
        case "state":
            guard let cursor = json["cursor"]?.int64Value, let scenes = json["scenes"]?.arrayValue else {
                return "a state line without its cursor or scenes"
            }
            state.cursor = cursor
            for entry in scenes {
                guard let id = entry["scene"]?.stringValue.flatMap(ReplicationJournal.sceneID) else {
                    return "a state line with a scene that has no valid name"
                }
                if let version = entry["version"]?.int64Value { state.applied[id] = version }
                if let digest = entry["digest"]?.uint64Value { state.digests[id] = digest }
                if let own = entry["own"]?.int64Value { state.ownSeqs[id] = own }
                if let held = entry["held"]?.uint64Value { state.held[id] = held }
                if let received = entry["recv"]?.int64Value { state.received[id] = received }
            }
        case "local":
            guard let scene, let number = json["n"]?.uint64Value,
                let format = json["format"]?.stringValue.flatMap(SceneFormat.init)
            else { return "a local change without its scene, number or format" }
            var bytes: [UInt8]? = nil
            if let content = json["content"] {
                guard let decoded = content.stringValue.flatMap(Hex.decode) else {
                    return "a local change whose content is not hex"
                }
                bytes = decoded
            }
            let origin = json["origin"].map(Wire.decodeOrigin) ?? .file
            state.pending.append(Pending(number: number, scene: scene, bytes: bytes, format: format, origin: origin))
            state.pendingCounts[scene, default: 0] += 1
            state.nextNumber = max(state.nextNumber, number + 1)
        case "pushed":
            guard let scene, let number = json["n"]?.uint64Value else {
                return "a push answer without its scene or number"
            }
            // An answer for a number no longer pending was applied before the file was last rewritten.
            guard state.removePending(number) != nil else { return nil }
            let left = state.pendingCounts[scene, default: 1] - 1
            state.pendingCounts[scene] = left > 0 ? left : nil
            if let version = json["version"]?.int64Value, version > 0 { state.applied[scene] = version }
            if let seq = json["seq"]?.int64Value, seq > 0 { state.ownSeqs[scene] = max(state.ownSeqs[scene] ?? 0, seq) }
            if let digest = json["digest"]?.uint64Value {
                state.digests[scene] = digest
                state.held[scene] = digest
            }
        case "recv":
            guard let scene, let digest = json["digest"]?.uint64Value else {
                return "a received change without its scene or digest"
            }
            state.digests[scene] = digest
            if let seq = json["seq"]?.int64Value { state.received[scene] = seq }
        case "done":
            guard let seq = json["seq"]?.int64Value else { return "a done line without its sequence" }
            state.cursor = max(state.cursor, seq)
            if let scene, let version = json["version"]?.int64Value {
                state.applied[scene] = version
                // Lines written before done lines named their digest: the latest received one.
                state.held[scene] = json["digest"]?.uint64Value ?? state.digests[scene]
            }
        default:
            return "not a journal line"
        }
        return nil
    }

    /// The state as the lines of a new file, and where each pending change's line is in it. Every pending
    /// content must be in memory (``Pending/bytes``).
    static func encode(_ state: State) -> (bytes: [UInt8], lines: [Range<Int64>]) {
        var out: [UInt8] = Array(#"{"t":"stream","id":"#.utf8)
        JSONWriter.appendString(state.stream, to: &out)
        out.append(contentsOf: #","next":"#.utf8)
        JSONWriter.appendUInt(state.nextNumber, to: &out)
        if let boot = state.boot {
            out.append(contentsOf: #","boot":"#.utf8)
            JSONWriter.appendString(boot, to: &out)
        }
        out.append(contentsOf: "}\n".utf8)
        out.append(contentsOf: #"{"t":"state","cursor":"#.utf8)
        JSONWriter.appendInt(state.cursor, to: &out)
        out.append(contentsOf: #","scenes":["#.utf8)
        // A change received up to the cursor is in the scene file: only those beyond it are kept.
        let received = state.received.filter { $0.value > state.cursor }
        let scenes = Set(state.applied.keys).union(state.digests.keys).union(state.ownSeqs.keys)
            .union(state.held.keys).union(received.keys).sorted()
        for (offset, scene) in scenes.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"scene":"#.utf8)
            JSONWriter.appendString(scene.rawValue, to: &out)
            if let version = state.applied[scene] {
                out.append(contentsOf: #","version":"#.utf8)
                JSONWriter.appendInt(version, to: &out)
            }
            if let digest = state.digests[scene] {
                out.append(contentsOf: #","digest":"#.utf8)
                JSONWriter.appendUInt(digest, to: &out)
            }
            if let own = state.ownSeqs[scene] {
                out.append(contentsOf: #","own":"#.utf8)
                JSONWriter.appendInt(own, to: &out)
            }
            if let held = state.held[scene] {
                out.append(contentsOf: #","held":"#.utf8)
                JSONWriter.appendUInt(held, to: &out)
            }
            if let seq = received[scene] {
                out.append(contentsOf: #","recv":"#.utf8)
                JSONWriter.appendInt(seq, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "]}\n".utf8)
        var lines: [Range<Int64>] = []
        lines.reserveCapacity(state.pending.count)
        for pending in state.pending {
            let start = Int64(out.count)
            out.append(contentsOf: localLine(pending))
            lines.append(start..<Int64(out.count))
        }
        return (out, lines)
    }

    /// Once the file holds the pending changes' lines (`lines`, in order), their contents leave memory.
    static func moveContentsToFile(_ state: inout State, lines: [Range<Int64>]) {
        for (index, line) in zip(state.pending.indices, lines) {
            state.pending[index].line = line
            state.pending[index].bytes = nil
        }
    }

    /// Every pending change's content (`nil` for a deletion), from memory or from the file open as `fd`.
    static func readContents(
        of pending: some Collection<Pending>, from fd: Int32
    ) throws(ReplicationError) -> [[UInt8]?] {
        var contents: [[UInt8]?] = []
        contents.reserveCapacity(pending.count)
        for change in pending {
            if change.deleted {
                contents.append(nil)
            } else if let bytes = change.bytes {
                contents.append(bytes)
            } else if let line = change.line {
                contents.append(try readContent(line, of: change.number, from: fd))
            } else {
                throw ReplicationError("push \(change.number) has neither its content nor its line")
            }
        }
        return contents
    }

    /// The content of the `local` line at `line` in the file open as `fd` (`pread`, so appends are not disturbed).
    static func readContent(_ line: Range<Int64>, of number: UInt64, from fd: Int32) throws(ReplicationError) -> [UInt8]
    {
        var buffer = [UInt8](repeating: 0, count: Int(line.upperBound - line.lowerBound))
        var done = 0
        while done < buffer.count {
            let count = buffer.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress.map { $0 + done }, raw.count - done, off_t(line.lowerBound) + off_t(done))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw ReplicationError("cannot read push \(number) back from the cluster journal (errno \(errno))")
            }
            done += count
        }
        var replayed = State(stream: "")
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONParser.parse(buffer.last == UInt8(ascii: "\n") ? Array(buffer.dropLast()) : buffer)
        } catch {
            throw ReplicationError("push \(number)'s line in the cluster journal is damaged: \(error)")
        }
        guard replay(json, into: &replayed) == nil, let read = replayed.pending.first, read.number == number,
            let content = read.bytes
        else {
            throw ReplicationError("push \(number)'s line in the cluster journal is not its local change")
        }
        return content
    }

    static func localLine(_ pending: Pending) -> [UInt8] {
        var line: [UInt8] = Array(#"{"t":"local","n":"#.utf8)
        JSONWriter.appendUInt(pending.number, to: &line)
        line.append(contentsOf: #","scene":"#.utf8)
        JSONWriter.appendString(pending.scene.rawValue, to: &line)
        line.append(contentsOf: #","format":""#.utf8)
        line.append(contentsOf: pending.format.rawValue.utf8)
        line.append(UInt8(ascii: "\""))
        if let bytes = pending.bytes {
            line.append(contentsOf: #","content":""#.utf8)
            Hex.append(bytes, to: &line)
            line.append(UInt8(ascii: "\""))
        }
        line.append(contentsOf: #","origin":"#.utf8)
        Wire.appendOrigin(pending.origin, to: &line)
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    /// Temp file, fsync, rename, fsync of the directory: a crash leaves the old journal or the new one.
    static func replace(_ path: String, with bytes: [UInt8]) throws(ReplicationError) {
        do throws(SystemError) {
            try FileSystem.writeAtomically(bytes, to: path, tempName: "cluster-journal.tmp", durable: true, mode: 0o640)
        } catch {
            throw ReplicationError("cannot write \(path): \(error)")
        }
    }

    /// The running kernel's boot ID: it changes at every boot, and only then can appends that were not synced be
    /// lost. Test builds take `SCENESYNC_TEST_BOOT_ID` under `SCENESYNC_TEST_HOOKS=1`, so that a test can play a
    /// reboot. Where the ID cannot be read every start counts as a new boot, which only costs numbers.
    static func currentBoot() -> String {
        #if SCENESYNC_TEST_HOOKS
        if let hooks = getenv("SCENESYNC_TEST_HOOKS"), String(cString: hooks) == "1",
            let boot = getenv("SCENESYNC_TEST_BOOT_ID")
        {
            return String(cString: boot)
        }
        #endif
        let fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "unknown-" + newStream() }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return "unknown-" + newStream() }
        return String(decoding: buffer[0..<count], as: UTF8.self).trimmingNewlines()
    }

    static func newStream() -> String {
        var random = SystemRandomNumberGenerator()
        return String(random.next(), radix: 36) + String(random.next() & 0xFFFF_FFFF, radix: 36)
    }
}

extension String {
    fileprivate func trimmingNewlines() -> String {
        String(self.prefix { $0 != "\n" })
    }
}
