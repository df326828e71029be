#if canImport(Glibc)
import Glibc
#endif

/// One line at a time on standard output (what the app does) or standard error (what went wrong), written at once:
/// `make check-gtk` keeps both in its logs.
enum Log {
    static func info(_ line: String) { write(line, to: 1) }
    static func error(_ line: String) { write("gtk-recipes: " + line, to: 2) }

    private static func write(_ line: String, to descriptor: Int32) {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
            }
            if written <= 0 { return }
            offset += written
        }
    }
}
