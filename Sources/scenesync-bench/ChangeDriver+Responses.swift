#if canImport(Glibc)
import Glibc
#endif

extension ChangeDriver {
    /// The answers read from the socket, in one buffer reused for every read: a line cut by a read stays at the
    /// start of it and the next read completes it.
    struct Responses {
        private(set) var bytes = [UInt8](repeating: 0, count: 1 << 18)
        /// The bytes of the incomplete line at the start of ``bytes``.
        private(set) var carry = 0

        /// Reads after the carried bytes without blocking; `nil` when nothing is waiting.
        mutating func receive(from fd: Int32) throws(BenchError) -> Int? {
            let carry = self.carry
            let count = bytes.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress.map { $0 + carry }, raw.count - carry, Int32(MSG_DONTWAIT))
            }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return nil }
                throw .system("recv", errno)
            }
            if count == 0 { throw BenchError("the daemon closed the writer's connection") }
            return count
        }

        /// Keeps the incomplete line that starts at `lineStart`, of the `total` bytes read, for the next read.
        mutating func keep(from lineStart: Int, of total: Int) {
            carry = total - lineStart
            if carry > 0, lineStart > 0 {
                bytes.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    base.copyMemory(from: base + lineStart, byteCount: total - lineStart)
                }
            }
        }
    }
}
