#if canImport(Glibc)
import Glibc
#endif

/// Reads all of standard input, for `set SCENE -`.
enum StandardInput {
    static func readAll() throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                return bytes
            } else if errno != EINTR {
                throw UsageError(message: "cannot read standard input: \(String(cString: strerror(errno)))")
            }
        }
    }
}
