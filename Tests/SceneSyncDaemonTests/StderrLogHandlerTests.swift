import Glibc
import Logging
import SceneSyncThreads
import Synchronization
import Testing

@testable import SceneSyncDaemon

@Suite struct StderrLogHandlerTests {
    static let priorities: [(Logger.Level, String)] = [
        (.trace, "<7>"), (.debug, "<7>"), (.info, "<6>"), (.notice, "<5>"),
        (.warning, "<4>"), (.error, "<3>"), (.critical, "<2>"),
    ]

    func line(
        _ level: Logger.Level,
        _ message: String,
        metadata: Logger.Metadata = [:],
        journald: Bool
    ) -> String {
        StderrLogHandler.formatLine(
            level: level,
            label: "scenesyncd",
            message: message,
            metadata: metadata,
            journald: journald,
            timestamp: "2026-11-21T08:46:35.123Z"
        )
    }

    @Test(arguments: priorities)
    func journaldLinesStartWithTheSyslogPriority(level: Logger.Level, prefix: String) {
        #expect(line(level, "hello", journald: true) == "\(prefix)scenesyncd: hello")
    }

    @Test func plainLinesStartWithTimestampAndLevel() {
        #expect(line(.info, "hello", journald: false) == "2026-11-21T08:46:35.123Z info scenesyncd: hello")
        #expect(line(.warning, "careful", journald: false) == "2026-11-21T08:46:35.123Z warning scenesyncd: careful")
    }

    @Test func aMessageIsAlwaysOneLine() {
        let formatted = line(.error, "first\nsecond\r\nthird\u{1B}[31m", journald: true)
        #expect(formatted == "<3>scenesyncd: first\\nsecond\\r\\nthird\\u{1B}[31m")
        #expect(!formatted.contains("\n"))
        #expect(line(.info, "tab\tstays", journald: true) == "<6>scenesyncd: tab\tstays")
    }

    @Test func metadataIsAppendedSortedAndQuotedWhereNeeded() {
        let metadata: Logger.Metadata = [
            "scene": "main",
            "revision": "42",
            "path": "/run/scenesync/my scenes",
            "empty": "",
            "note": "two\nlines",
        ]
        #expect(
            line(.info, "merged", metadata: metadata, journald: true)
                == "<6>scenesyncd: merged empty=\"\" note=two\\nlines path=\"/run/scenesync/my scenes\" revision=42"
                + " scene=main"
        )
        #expect(StderrLogHandler.quotedIfNeeded("say \"hi\"") == "\"say \\\"hi\\\"\"")
    }

    @Test func eventMetadataOverridesProviderAndHandlerMetadata() {
        var handler = StderrLogHandler(
            label: "scenesyncd",
            logLevel: .info,
            metadataProvider: Logger.MetadataProvider { ["source": "provider", "request": "7"] },
            journald: true
        )
        handler[metadataKey: "source"] = "handler"
        handler[metadataKey: "pid"] = "12"
        struct Failure: Error, CustomStringConvertible { var description: String { "disk full" } }
        let event = LogEvent(
            level: .error,
            message: "snapshot failed",
            error: Failure(),
            metadata: ["request": "8"],
            source: "SceneSyncDaemon",
            file: #fileID,
            function: #function,
            line: #line
        )
        #expect(
            handler.line(for: event)
                == "<3>scenesyncd: snapshot failed error=\"disk full\" pid=12 request=8 source=provider"
        )
    }

    @Test func plainTimestampIsCurrentUTC() {
        let handler = StderrLogHandler(label: "x", logLevel: .info, metadataProvider: nil, journald: false)
        let formatted = handler.line(
            for: LogEvent(
                level: .info, message: "m", metadata: nil, source: "s", file: #fileID, function: #function,
                line: #line)
        )
        let parts = formatted.split(separator: " ")
        #expect(parts.count == 4)
        let timestamp = String(parts[0])
        #expect(timestamp.count == 24 && timestamp.hasSuffix("Z") && timestamp.contains("T"))
        #expect(parts.dropFirst().joined(separator: " ") == "info x: m")
    }

    /// Lines written from many threads at once arrive whole: one `write(2)` each. The writers and the reader are
    /// threads of their own, since they block in the pipe; the test waits for them without holding a thread.
    @Test func concurrentLinesDoNotInterleave() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let collected = Mutex<[UInt8]?>(nil)
        let reader = try PosixThread.start(named: "test-reader") {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                bytes += buffer.prefix(count)
            }
            collected.withLock { $0 = bytes }
        }.get()
        let writers = 8
        let linesPerWriter = 200
        let finished = Atomic<Int>(0)
        var threads: [PosixThread] = []
        for writer in 0..<writers {
            threads.append(
                try PosixThread.start(named: "test-writer") {
                    let payload = String(repeating: Character(UnicodeScalar(UInt8(65 + writer))), count: 300)
                    for index in 0..<linesPerWriter {
                        StderrLogHandler.emit("\(writer) \(index) \(payload)\n", to: writeEnd)
                    }
                    finished.add(1, ordering: .sequentiallyConsistent)
                }.get())
        }
        while finished.load(ordering: .sequentiallyConsistent) < writers {
            try await Task.sleep(for: .milliseconds(1))  // a pause between checks of the condition
        }
        for thread in threads { thread.join() }  // each has returned: nothing to wait for
        close(writeEnd)
        while collected.withLock({ $0 == nil }) {
            try await Task.sleep(for: .milliseconds(1))  // a pause until the reader has seen the end of the pipe
        }
        reader.join()  // it has returned: nothing to wait for
        let text = String(decoding: collected.withLock { $0 } ?? [], as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == writers * linesPerWriter)
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let writer = Int(fields[0]) else {
                Issue.record("mangled line: \(line.prefix(80))")
                continue
            }
            #expect(fields[2] == String(repeating: Character(UnicodeScalar(UInt8(65 + writer))), count: 300))
        }
    }
}
