/// The control socket cannot be set up as configured: the message names the path and the cause.
struct ControlServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
