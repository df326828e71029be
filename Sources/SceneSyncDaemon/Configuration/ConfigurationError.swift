/// A configuration that cannot be used, explained in one line.
///
/// One line because `scenesyncd --check-config` and a failed start print it as is, and journald shows one line per
/// entry; the message names the file and line, environment variable or flag, the key, and the problem.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
