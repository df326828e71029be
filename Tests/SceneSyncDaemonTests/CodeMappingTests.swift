import Testing

@testable import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// What ``StartupMemory`` may give back: only the executable's own code mapping, and only when all its pages are
/// clean.
@Suite struct CodeMappingTests {
    static let executable = "/usr/libexec/scenesyncd"

    /// The code mapping's `Anonymous:` line is `codeAnonymous`, or missing when that is `nil`.
    static func smaps(codeAnonymous: String? = "Anonymous:             0 kB") -> [UInt8] {
        let code = """
            55d0a0000000-55d0a2585000 r-xp 00000000 fe:00 5318978                    /usr/libexec/scenesyncd
            Size:              38420 kB
            Rss:               17560 kB

            """
        return Array((code + (codeAnonymous.map { $0 + "\n" } ?? "") + rest).utf8)
    }

    static let rest = """
        55d0a2585000-55d0a2692000 r--p 02585000 fe:00 5318978                    /usr/libexec/scenesyncd
        Size:               1076 kB
        Anonymous:          1076 kB
        55d0a2692000-55d0a4bce000 rw-p 02692000 fe:00 5318978                    /usr/libexec/scenesyncd
        Anonymous:          2628 kB
        7f00a0000000-7f00a0156000 r-xp 00028000 fe:00 1234                       /usr/lib/x86_64-linux-gnu/libc.so.6
        Anonymous:             0 kB
        7f00b0000000-7f00b0021000 rw-p 00000000 00:00 0                          [heap]
        Anonymous:           132 kB
        """

    @Test func onlyTheExecutablesCodeIsFound() {
        let found = CodeMapping.parse(smaps: Self.smaps(), executable: Self.executable)
        #expect(found == [CodeMapping(start: 0x55d0_a000_0000, end: 0x55d0_a258_5000, anonymousKilobytes: 0)])
    }

    @Test func aWrittenPageIsReported() {
        let written = Self.smaps(codeAnonymous: "Anonymous:             4 kB")
        let found = CodeMapping.parse(smaps: written, executable: Self.executable)
        #expect(found.map(\.anonymousKilobytes) == [4])
    }

    @Test func aMappingWithoutItsAnonymousFigureIsLeftOut() {
        let found = CodeMapping.parse(smaps: Self.smaps(codeAnonymous: nil), executable: Self.executable)
        #expect(found.isEmpty)
    }

    /// The test process's own code: found, and running on after its pages were dropped.
    @Test func thisProcessKeepsRunningAfterItsCodePagesAreDropped() throws {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        try #require(count > 0)
        let executable = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let descriptor = open("/proc/self/smaps", O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var smaps: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let read = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard read > 0 else { break }
            smaps += chunk[0..<read]
        }
        #expect(!CodeMapping.parse(smaps: smaps, executable: executable).isEmpty)
        StartupMemory.returnFreedMemory()
        #expect(CodeMapping.parse(smaps: smaps, executable: executable).count >= 1)
    }
}
