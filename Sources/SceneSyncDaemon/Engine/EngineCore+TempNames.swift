import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The names of the daemon's own temp files in the scenes directory.
extension EngineCore {
    /// A temp name in the scenes directory that the watcher ignores (a dot-file, not ending in `.json`):
    /// `.<ID>.json.<pid>.tmp`. The pattern is reserved for the daemon (docs/protocol.md): such files are removed at start.
    static func tempName(_ scene: SceneID) -> String { "." + scene.rawValue + ownTempSuffix }

    /// Read once: every scene-file write names its temp file with it.
    static let ownPID = getpid()

    /// What follows the scene ID in every temp name of this process: `.json.<pid>.tmp`, made once.
    static let ownTempSuffix = ".json.\(ownPID).tmp"

    /// ``ownTempSuffix``'s bytes, for names read from the kernel.
    static let ownTempSuffixBytes = Array(ownTempSuffix.utf8)

    /// Whether `name` is exactly a temp name of this process (``tempName(_:)`` of some scene), on the bytes the
    /// kernel gives: the watcher asks this of several events of every change the daemon writes, so no string is made.
    static func isThisProcessTempName(_ name: UnsafeRawBufferPointer) -> Bool {
        let suffix = ownTempSuffixBytes
        guard name.count > 1 + suffix.count, name[name.startIndex] == UInt8(ascii: ".") else { return false }
        let idEnd = name.endIndex - suffix.count
        guard name[idEnd...].elementsEqual(suffix) else { return false }
        return SceneID.isValid(bytes: UnsafeRawBufferPointer(rebasing: name[(name.startIndex + 1)..<idEnd]))
    }

    /// Whether `name` has the shape of ``tempName(_:)``: a dot, a scene ID, `.json.`, a pid, `.tmp`.
    ///
    /// On the name's bytes: the watcher asks this of several events of every change the daemon writes.
    static func isOwnTempName(_ name: String) -> Bool {
        // Asked of every listed name at start: a scene file's never begins with a dot.
        guard name.utf8.first == UInt8(ascii: ".") else { return false }
        let bytes = Array(name.utf8)
        let suffix = Array(".tmp".utf8)
        let json = Array(".json.".utf8)
        guard bytes.first == UInt8(ascii: "."), bytes.count > 1 + suffix.count,
            bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return false }
        let inner = bytes[1..<(bytes.count - suffix.count)]
        // The pid: the digits at the end of `inner`, after the last `.json.`.
        var end = inner.endIndex
        while end > inner.startIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(inner[end - 1]) { end -= 1 }
        guard end < inner.endIndex, end - inner.startIndex >= json.count,
            inner[(end - json.count)..<end].elementsEqual(json)
        else { return false }
        let id = inner[inner.startIndex..<(end - json.count)]
        return SceneID(fileName: String(decoding: id, as: UTF8.self) + ".json") != nil
    }
}
