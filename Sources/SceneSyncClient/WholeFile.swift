#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole file read with plain system calls, for ``SceneFile``: its scene file, and the daemon's configuration file
/// when it looks for the scenes directory. No Foundation, so that the library stays small for apps that write files.
enum WholeFile {
    /// Why a file could not be read: the failing call and its `errno`.
    struct Failure: Error {
        var call: String
        var code: Int32

        var reason: String { String(cString: strerror(code)) }
    }

    static func read(_ path: String) throws(Failure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(call: "open", code: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(call: "read", code: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
