#if canImport(Glibc)
import Glibc
#endif

/// A failure that ends the scenario: what went wrong, in one line, for standard error.
struct BenchError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }

    /// A failed system call, with its errno text.
    static func system(_ operation: String, _ code: Int32) -> BenchError {
        BenchError("\(operation): \(String(cString: strerror(code)))")
    }
}
