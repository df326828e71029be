/// A command line that is well-formed for the parser but wrong for the command (a JSON argument that does not
/// parse, a `set` argument that is not an array): exit status 2, with the reason and no usage text, since the
/// usage was followed.
struct UsageError: Error {
    var message: String
}
