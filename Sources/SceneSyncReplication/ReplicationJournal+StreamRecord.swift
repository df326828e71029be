import SceneSyncCore
import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// What tells an emptied or removed journal from a first start: `<state-dir>/cluster-stream`, one line that names
/// this host's push stream and how far its numbers went when the journal was last rewritten.
///
/// The journal alone cannot tell: an empty or missing file reads as a first start, and a first start makes a new
/// stream, catches up from the beginning and takes this host's own earlier pushes for other hosts' changes,
/// silently overwriting what it acknowledged and never pushing what was pending (§9, "A damaged, emptied or missing
/// journal"). The record is written after the journal at every start, atomically and durably, so it exists only
/// once a journal did; it never changes between starts, so it costs no write on the push path.
extension ReplicationJournal {
    struct StreamRecord: Sendable, Equatable {
        static let fileName = "cluster-stream"

        var stream: String
        /// The next push number when the journal was last rewritten: a floor, not the latest.
        var next: UInt64

        /// The record's line.
        var encoded: [UInt8] {
            var out: [UInt8] = Array(#"{"stream":"#.utf8)
            JSONWriter.appendString(stream, to: &out)
            out.append(contentsOf: #","next":"#.utf8)
            JSONWriter.appendUInt(next, to: &out)
            out.append(contentsOf: "}\n".utf8)
            return out
        }

        /// Reads the record at `path`: `nil` when there is none, a reason when it cannot be read or understood.
        static func read(_ path: String) -> Result<StreamRecord?, Damage> {
            let bytes: [UInt8]
            do throws(SystemError) {
                guard let read = try FileSystem.read(path, limit: 4096) else { return .success(nil) }
                bytes = read
            } catch {
                return .failure(Damage(reason: "the stream record \(path) cannot be read (\(error))"))
            }
            guard let json = try? JSONParser.parse(bytes),  // the failure is the reason below
                let stream = json["stream"]?.stringValue, let next = json["next"]?.uint64Value
            else {
                return .failure(Damage(reason: "the stream record \(path) is not one this host wrote"))
            }
            return .success(StreamRecord(stream: stream, next: next))
        }

        /// Replaces the record atomically and durably.
        func write(to path: String) throws(ReplicationError) {
            do throws(SystemError) {
                try FileSystem.writeAtomically(
                    encoded, to: path, tempName: StreamRecord.fileName + ".tmp", durable: true, mode: 0o640)
            } catch {
                throw ReplicationError("cannot write \(path): \(error)")
            }
        }
    }

    /// Reads and replays the journal at start, checked against the stream record: its bytes, the damage that
    /// stops replication or whether a torn last line was skipped, and the record. Never throws: whatever is wrong
    /// with the journal is damage (the host works alone and says so), never a reason for the daemon to exit.
    static func load(
        journal path: String, record recordPath: String, into state: inout State
    ) -> (bytes: [UInt8], found: (damage: Damage?, skippedTornLine: Bool), record: StreamRecord?) {
        let record: StreamRecord?
        switch StreamRecord.read(recordPath) {
        case .success(let read): record = read
        case .failure(let damage): return ([], (damage, false), nil)
        }
        let bytes: [UInt8]
        switch readJournal(path) {
        case .failure(let damage):
            return ([], (damage, false), record)
        case .success(nil):
            guard let record else { return ([], (nil, false), nil) }
            let reason = "the journal is missing, but this host replicated before \(record.named)"
            return ([], (Damage(reason: reason), false), record)
        case .success(let read?):
            bytes = read
        }
        if bytes.isEmpty, let record {
            let reason = "the journal is empty, but this host replicated before \(record.named)"
            return ([], (Damage(reason: reason), false), record)
        }
        let replayed = replay(bytes, into: &state)
        if replayed.damage == nil, let record, record.stream != state.stream {
            let reason = "the journal's stream \(state.stream) is not this host's \(record.named)"
            return (bytes, (Damage(reason: reason), false), record)
        }
        return (bytes, replayed, record)
    }

    /// The journal's bytes, `nil` when there is none; damage when it is not a regular file or cannot be read. A
    /// FIFO or a device in its place is never opened (opening a FIFO would wait for a writer forever).
    static func readJournal(_ path: String) -> Result<[UInt8]?, Damage> {
        var st = stat()
        if lstat(path, &st) != 0 {
            if errno == ENOENT { return .success(nil) }
            return .failure(Damage(reason: "the journal cannot be read (\(String(cString: strerror(errno))))"))
        }
        let kind = st.st_mode & S_IFMT
        guard kind == S_IFREG else {
            let name =
                switch kind {
                case S_IFDIR: "a directory"
                case S_IFLNK: "a symbolic link"
                case S_IFIFO: "a FIFO"
                case S_IFSOCK: "a socket"
                default: "a device"
                }
            return .failure(Damage(reason: "the journal is not a regular file but \(name)"))
        }
        do throws(SystemError) {
            return .success(try FileSystem.read(path))
        } catch {
            return .failure(Damage(reason: "the journal cannot be read (\(error))"))
        }
    }
}

extension ReplicationJournal.StreamRecord {
    /// How the log and `stats.cluster` name the record.
    var named: String { "(stream \(stream) in \(ReplicationJournal.StreamRecord.fileName))" }
}
