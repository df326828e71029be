import Glibc
import SceneSyncCore

/// Turns the bytes of one inotify `read()` into scene directory events.
///
/// It is separate from the reader thread so that the mapping, including the kernel-only cases such as
/// `IN_Q_OVERFLOW`, can be tested on synthetic buffers.
enum InotifyEventDecoder {
    /// Names starting with this are markers: they are reported, though `SceneID(fileName:)` ignores them as dot-files.
    static let markerPrefix = ".scenesync-"

    /// The fixed part of `struct inotify_event`: `wd`, `mask`, `cookie`, `len`; `len` name bytes follow.
    static let headerSize = MemoryLayout<inotify_event>.size

    /// Decodes every complete event in `bytes`, in kernel order.
    ///
    /// - Returns: The events the daemon acts on, and whether the watch ended; decoding stops at the end of the
    ///   watch, because nothing after it can concern the directory.
    static func decode(
        _ bytes: UnsafeRawBufferPointer,
        watchDescriptor: Int32
    ) -> (events: [SceneDirectoryEvent], watchEnded: Bool) {
        var events: [SceneDirectoryEvent] = []
        var offset = 0
        /// The cookie of the last rename away from one of this process's temp names: the rename into place that
        /// carries it is the daemon's own write.
        var ownMoveCookie: UInt32? = nil
        while bytes.count - offset >= headerSize {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            guard length <= bytes.count - nameStart else { break }
            offset = nameStart + length

            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                events.append(.overflow)
                continue
            }
            // An overflow is the only event without the watch's descriptor; anything else foreign is not ours.
            guard wd == watchDescriptor else { continue }
            if mask & Self.watchEndMask != 0 {
                events.append(.directoryGone)
                return (events, true)
            }
            let name = trimmed(UnsafeRawBufferPointer(rebasing: bytes[nameStart..<(nameStart + length)]))
            // The daemon's own write (a temp file of this process renamed into place, the kernel pairs both halves
            // by cookie) is known already: reading it back would only find the daemon's own bytes. An app's write
            // that lands right after it is a separate event and is still reported.
            if mask & UInt32(IN_MOVED_FROM) != 0, EngineCore.isThisProcessTempName(name) {
                ownMoveCookie = cookie
                continue
            }
            if mask & UInt32(IN_MOVED_TO) != 0, cookie != 0, cookie == ownMoveCookie {
                ownMoveCookie = nil
                continue
            }
            // The other half of the daemon's exchange (or its removal by rename): the scene file moved to one of
            // its temp names, where the daemon reads what it displaced itself. Not a removal: the daemon's own file
            // is in place, or the daemon's removal is its own change.
            if mask & UInt32(IN_MOVED_FROM) != 0, cookie != 0,
                movesToOwnTempName(cookie: cookie, in: bytes, from: offset)
            {
                continue
            }
            if let event = event(mask: mask, name: name) {
                events.append(event)
            }
        }
        return (events, false)
    }

    /// Whether the `IN_MOVED_TO` paired with `cookie` (the kernel queues it right after the `IN_MOVED_FROM`, in
    /// the same read unless the buffer ends between them) names one of this process's temp names. A pair split
    /// across two reads is reported as a removal: the engine then reads the file, finds the daemon's own bytes and
    /// records nothing.
    static func movesToOwnTempName(cookie: UInt32, in bytes: UnsafeRawBufferPointer, from start: Int) -> Bool {
        var offset = start
        while bytes.count - offset >= headerSize {
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let eventCookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            guard length <= bytes.count - nameStart else { return false }
            if eventCookie == cookie, mask & UInt32(IN_MOVED_TO) != 0 {
                return EngineCore.isThisProcessTempName(
                    trimmed(UnsafeRawBufferPointer(rebasing: bytes[nameStart..<(nameStart + length)])))
            }
            offset = nameStart + length
        }
        return false
    }

    /// The event for one directory entry, from the bytes of its name, or `nil` when the daemon must not see it: a
    /// string is made only for a scene's ID or a marker's name, never for the daemon's own temp files or anything
    /// else the daemon ignores.
    static func event(mask: UInt32, name: UnsafeRawBufferPointer) -> SceneDirectoryEvent? {
        // A directory named like a scene file is still not a scene file (§3).
        guard mask & UInt32(IN_ISDIR) == 0, !name.isEmpty else { return nil }
        if mask & (Self.arrivalMask | UInt32(IN_MODIFY) | Self.departureMask) != 0, let id = SceneID(fileName: name) {
            return mask & Self.arrivalMask != 0
                ? .changed(id) : mask & UInt32(IN_MODIFY) != 0 ? .modified(id) : .removed(id)
        }
        guard mask & Self.arrivalMask != 0, name.starts(with: markerPrefixBytes) else { return nil }
        // Not UTF-8: no marker's name.
        return UTF8Text.string(name).map(SceneDirectoryEvent.marker)
    }

    private static let markerPrefixBytes = Array(markerPrefix.utf8)

    /// ``event(mask:name:)`` of a name given as text (`nil`: not UTF-8).
    static func event(mask: UInt32, name: String?) -> SceneDirectoryEvent? {
        guard let name else { return nil }
        return Array(name.utf8).withUnsafeBytes { event(mask: mask, name: $0) }
    }

    /// Content is final: the writer closed the file or renamed it into place. `IN_MODIFY` is not among them: reading
    /// after every `write()` would see half-written files; it only marks the file as open for writing.
    private static let arrivalMask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)
    private static let departureMask = UInt32(IN_DELETE | IN_MOVED_FROM)
    /// After any of these the watch no longer describes the configured path.
    private static let watchEndMask = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)

    /// The name without the NULs that pad it.
    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        return UnsafeRawBufferPointer(rebasing: bytes[bytes.startIndex..<end])
    }
}
