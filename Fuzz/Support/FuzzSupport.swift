/// What every harness shares: turning libFuzzer's buffer into bytes, and reporting a broken property.
///
/// A broken property must end the process abnormally, or libFuzzer neither saves the input nor stops; `fatalError`
/// traps (SIGILL), which libFuzzer catches, and prints the message first so that the crash file comes with a reason.

/// The input as the code under test takes it. libFuzzer may pass a null pointer for an empty input.
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Stops the run when a property does not hold.
func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() { fatalError("property violated: \(message())", file: file, line: line) }
}

/// Bytes as text for messages; inputs may hold anything, so the text is only ever shown, never compared.
func show(_ bytes: some Collection<UInt8>) -> String {
    let text = String(decoding: bytes.prefix(300), as: UTF8.self)
    return bytes.count > 300 ? "\(text)… (\(bytes.count) bytes)" : text
}
