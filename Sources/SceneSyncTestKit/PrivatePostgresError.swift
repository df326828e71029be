#if canImport(Glibc)
import Glibc
#endif

/// Why a private PostgreSQL could not be made, started or asked: the failing step and what it printed.
public struct PrivatePostgresError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    static func system(_ what: String, _ number: Int32) -> PrivatePostgresError {
        PrivatePostgresError("\(what): \(String(cString: strerror(number)))")
    }
}
