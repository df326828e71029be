import NIOCore
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// What each scene file was (device, inode, size, times, and the digest of its bytes) when a snapshot was written,
/// so that the next start need not read a file that is still exactly that one: most of a restart with many scenes
/// is reading files that did not change.
///
/// Kept beside the snapshots in `<state-dir>/scene-files.index` and tied to one snapshot (its epoch and revision)
/// and to the codec's limits. A file is listed only when the engine knew it to hold the snapshot's content and had
/// merged every change made to the scenes directory before a moment a second later than the file's last change
/// (``margin``): a write the engine had not merged yet, or one in the same tick of the file system's clock as the
/// moment the file was looked at, leaves the file out, and it is read as before. An index that does not match, or
/// does not decode, is ignored.
struct SceneFileIndex: Sendable, Equatable {
    /// One file as `lstat` saw it, and the digest of its bytes.
    struct Stamp: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: UInt64
        /// Modification and status-change times, in nanoseconds since the epoch. The status-change time cannot be
        /// set by anyone (unlike the modification time), and any write, truncation or rename changes it.
        var modified: Int64
        var changed: Int64
        var digest: UInt64
    }

    /// How much older than the moment everything was merged a file's last change must be: more than any file
    /// system's timestamp granularity, so that a write in the same tick as that moment cannot look older.
    static let margin: Int64 = 1_000_000_000

    var epoch: String
    var revision: UInt64
    /// The codec's limits when it was written: a file that was within them may not be any more.
    var codec: String
    var files: [SceneID: Stamp]

    static let magic = Array("scenesync.scene-files/1\n".utf8)
    /// The temp name it is written through, in the state directory.
    static let tempName = ".scene-files.tmp"

    /// The codec's limits as the index records them.
    static func describe(_ codec: SceneFileCodec) -> String {
        "\(codec.policy) \(codec.maxFileBytes) \(codec.maxDepth)"
    }

    /// What `lstat` says of `path` now, with `digest` as the file's; `nil` for anything but a regular file.
    static func stamp(of path: String, digest: UInt64) -> Stamp? {
        stamp(of: path, in: AT_FDCWD, digest: digest)
    }

    /// ``stamp(of:digest:)`` of `name` in the directory open as `directory`: no walk of the directory's own path
    /// for each of a hundred thousand files.
    static func stamp(of name: String, in directory: Int32, digest: UInt64) -> Stamp? {
        var info = stat()
        // With the name's own bytes: passing a `String` to a C parameter copies it into a new array first.
        let found = name.withCString { fstatat(directory, $0, &info, AT_SYMLINK_NOFOLLOW) }
        guard found == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return nil
        }
        return Stamp(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: UInt64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec), digest: digest)
    }

    /// Whether the file at `path` is still the one `stamp` describes.
    static func isUnchanged(_ path: String, since stamp: Stamp) -> Bool {
        Self.stamp(of: path, digest: stamp.digest) == stamp
    }

    /// ``isUnchanged(_:since:)`` of `name` in the directory open as `directory`.
    static func isUnchanged(_ name: String, in directory: Int32, since stamp: Stamp) -> Bool {
        Self.stamp(of: name, in: directory, digest: stamp.digest) == stamp
    }

    /// The current time on the clock file times are taken from, in nanoseconds since the epoch.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Stamps of the files of `candidates` (scene and the digest of the content the snapshot holds for it) whose
    /// last change is at least ``margin`` older than `settled`, the moment by which every change was merged.
    static func stamps(
        of candidates: [(scene: SceneID, digest: UInt64)], in directory: String, settled: Int64
    ) -> [SceneID: Stamp] {
        var files: [SceneID: Stamp] = [:]
        files.reserveCapacity(candidates.count)
        for (scene, digest) in candidates {
            guard let stamp = stamp(of: directory + "/" + scene.fileName, digest: digest),
                stamp.changed < settled - margin, stamp.modified < settled - margin
            else { continue }
            files[scene] = stamp
        }
        return files
    }

    // MARK: - Encoding

    /// A binary file: the magic line, the snapshot's epoch and revision, the codec's limits, the stamps, and a
    /// digest of everything before it, so that a torn or foreign file is never taken for an index.
    func encode() -> [UInt8] {
        var buffer = ByteBufferAllocator().buffer(capacity: 64 + files.count * 64)
        buffer.writeBytes(Self.magic)
        buffer.writeLengthPrefixedString(epoch)
        buffer.writeInteger(revision)
        buffer.writeLengthPrefixedString(codec)
        buffer.writeInteger(UInt64(files.count))
        for (scene, stamp) in files {
            buffer.writeLengthPrefixedString(scene.rawValue)
            buffer.writeMultipleIntegers(stamp.device, stamp.inode, stamp.size)
            buffer.writeMultipleIntegers(stamp.modified, stamp.changed, stamp.digest)
        }
        var bytes = Array(buffer.readableBytesView)
        let checksum = SceneStore.digest(bytes)
        withUnsafeBytes(of: checksum.bigEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The index in `bytes`; `nil` when they are not a whole index.
    ///
    /// Read in place: a restart with a hundred thousand scenes reads one of 6 MB while it decodes the snapshot, and
    /// copying it twice (without its checksum, then into a `ByteBuffer`) was a fifth of that read.
    static func decode(_ bytes: [UInt8]) -> SceneFileIndex? {
        guard bytes.count >= magic.count + 8, bytes.starts(with: magic) else { return nil }
        return bytes.withUnsafeBytes { raw -> SceneFileIndex? in
            let body = UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 8)])
            var trailer = IndexReader(raw, at: raw.count - 8)
            guard let checksum = trailer.integer(UInt64.self), checksum == SceneStore.digest(body) else { return nil }
            var reader = IndexReader(body, at: magic.count)
            // Each stamp takes at least its name's length and six integers: a count that cannot fit is refused
            // before room is made for it.
            guard let epoch = reader.string(), let revision = reader.integer(UInt64.self),
                let codec = reader.string(), let count = reader.integer(UInt64.self),
                count <= UInt64(reader.remaining / IndexReader.smallestStamp)
            else { return nil }
            var files: [SceneID: Stamp] = [:]
            files.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let scene = reader.sceneID(), let device = reader.integer(UInt64.self),
                    let inode = reader.integer(UInt64.self), let size = reader.integer(UInt64.self),
                    let modified = reader.integer(Int64.self), let changed = reader.integer(Int64.self),
                    let digest = reader.integer(UInt64.self)
                else { return nil }
                files[scene] = Stamp(
                    device: device, inode: inode, size: size, modified: modified, changed: changed, digest: digest)
            }
            guard reader.isAtEnd else { return nil }
            return SceneFileIndex(epoch: epoch, revision: revision, codec: codec, files: files)
        }
    }
}

/// Reads an index's fields in place, as ``SceneFileIndex/encode()`` wrote them with `ByteBuffer`: big-endian
/// integers, strings after their 32-bit length.
private struct IndexReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    var isAtEnd: Bool { offset == bytes.count }

    var remaining: Int { bytes.count - offset }

    /// The bytes of a stamp with an empty name: its length, then six 64-bit integers.
    static let smallestStamp = 4 + 6 * 8

    mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) -> Integer? {
        let size = MemoryLayout<Integer>.size
        guard bytes.count - offset >= size else { return nil }
        let value = Integer(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Integer.self))
        offset += size
        return value
    }

    /// The bytes of a length-prefixed string.
    private mutating func stringBytes() -> UnsafeRawBufferPointer? {
        guard let length = integer(UInt32.self).map(Int.init), bytes.count - offset >= length else { return nil }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
    }

    mutating func string() -> String? {
        stringBytes().flatMap(UTF8Text.string)
    }

    /// A scene ID, checked on its bytes before a string is made of them.
    mutating func sceneID() -> SceneID? {
        stringBytes().flatMap(SceneID.init(bytes:))
    }
}

extension ByteBuffer {
    fileprivate mutating func writeLengthPrefixedString(_ string: String) {
        let bytes = Array(string.utf8)
        writeInteger(UInt32(bytes.count))
        writeBytes(bytes)
    }
}
