/// A replication failure at start (an unusable journal), or one the log names.
public struct ReplicationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
