import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr, a whole line per `write(2)`: unbuffered, so `watch` output reaches a pipe as each
/// event arrives, and lines from concurrent writers never interleave. Every error line starts with `scenesync: ` so
/// it can be told apart in logs (for example when systemd runs `scenesync reload` as `ExecReload`).
enum Output {
    static func line(_ text: String) {
        write(text + "\n", to: 1)
    }

    /// Bytes as they are, with no newline added (`get --raw`).
    static func raw(_ bytes: [UInt8]) {
        write(bytes, to: 1)
    }

    /// One JSON object per line, compact.
    static func json(_ value: JSONValue) {
        var bytes = value.serialized()
        bytes.append(UInt8(ascii: "\n"))
        write(bytes, to: 1)
    }

    /// A daemon's error as one JSON object on stderr: `{"error":{"code":…,"message":…,"current"?:…}}`.
    static func jsonError(_ error: SceneSyncError) {
        var bytes = Array(#"{"error":"#.utf8)
        Wire.appendError(error, to: &bytes)
        bytes.append(contentsOf: "}\n".utf8)
        write(bytes, to: 2)
    }

    /// A failure of the client's own (no daemon, usage, a timeout) in the same shape.
    static func jsonError(code: String, message: String) {
        var bytes = Array(#"{"error":{"code":"#.utf8)
        JSONWriter.appendString(code, to: &bytes)
        bytes.append(contentsOf: #","message":"#.utf8)
        JSONWriter.appendString(message, to: &bytes)
        bytes.append(contentsOf: "}}\n".utf8)
        write(bytes, to: 2)
    }

    static func error(_ message: String) {
        errorLine("scenesync: " + message)
    }

    static func errorLine(_ text: String) {
        write(text + "\n", to: 2)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        write(Array(text.utf8), to: descriptor)
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                if descriptor == 1 { stdoutClosed(errno: errno) }
                return
            }
        }
    }

    /// The reader of stdout went away (`scenesync watch | head -1`). swift-nio ignores `SIGPIPE`, so the write only
    /// fails; without this, `watch` would keep running with nobody reading. End the way Unix tools do when their
    /// pipe closes: by `SIGPIPE`.
    private static func stdoutClosed(errno code: Int32) -> Never {
        if code == EPIPE {
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
        }
        Glibc.exit(1)
    }
}
