#if canImport(Glibc)
import Glibc

/// glibc's `malloc_trim`, which Swift's Glibc module does not export (it lives in `<malloc.h>`).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32

/// glibc's `mallopt`, also only in `<malloc.h>`.
@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32

/// `M_MMAP_THRESHOLD` of `<malloc.h>`.
private let mmapThresholdParameter: Int32 = -3

/// `M_ARENA_MAX` of `<malloc.h>`.
private let arenaMaxParameter: Int32 = -8
#endif

/// Gives back the memory that only the start needed: freed heap blocks and the pages of code that ran once.
///
/// A start with many scenes reads a large snapshot, or every scene file, on several threads, and frees most of what
/// it allocated (the snapshot's bytes, its spans, the file index, the decoded chunks) while the store it built stays.
/// glibc keeps those freed pages in each thread's arena, between live blocks where its automatic trim never reaches,
/// so a restarted daemon held about a quarter more resident memory than the same store built by changes. One trim
/// after the start-up merge returns them; it costs a few milliseconds once.
///
/// The executable links the Swift runtime, Foundation and its dependencies statically, so its code is a 40 MB
/// mapping. The start (options, configuration, YAML, the restore) touches about 20 MB of it, and the kernel maps the
/// neighbours of every page it faults in, so those pages would stay in the daemon's resident set for its whole life
/// although most never run again. They are clean pages of the file: dropping them from the mapping loses nothing,
/// the page cache still holds them, and a page that is needed again is mapped back on its next use.
enum StartupMemory {
    /// Keeps every block of 128 KiB or more in a mapping of its own, returned to the system when it is freed.
    ///
    /// glibc starts there too, but raises the threshold to the size of each such block freed, up to 32 MiB. The
    /// first start-up read of a large snapshot (or of the file index) freed one, so from then on every large buffer
    /// came from the heap arenas, where it left holes between the scenes decoded beside it: a daemon restarted with
    /// 100,000 scenes kept about 10 MB more resident than the same store built by changes, and no trim returned it.
    /// Setting the threshold once stops the raising; a large block then costs an `mmap` and a `munmap`, which only
    /// start-up, snapshots and very large scenes allocate.
    static func keepLargeBlocksMapped() {
        #if canImport(Glibc)
        _ = mallopt(mmapThresholdParameter, 128 << 10)
        #endif
    }

    /// At most four heap arenas, where glibc would make up to eight per core, one for each thread that allocates
    /// while the others hold theirs.
    ///
    /// A restore decodes on every core and lists the directory beside it, and each of those threads left part of
    /// the store in an arena of its own, each with its own free space around it: a daemon restarted with 100,000
    /// scenes held 51 MB of anonymous memory where the same store built from the files held 45, and no trim returned
    /// it. With four arenas it holds 45 after a restart too, and the restart took no longer (with one arena, the
    /// decoding threads waited on each other's allocations, and it did).
    static func limitArenas() {
        #if canImport(Glibc)
        _ = mallopt(arenaMaxParameter, 4)
        #endif
    }

    static func returnFreedMemory() {
        #if canImport(Glibc)
        _ = mallocTrim(0)
        releaseCodePages()
        #endif
    }

    #if canImport(Glibc)
    /// `madvise(MADV_DONTNEED)` on the executable's own code mapping, only when none of its pages was ever written
    /// (a debugger's breakpoint makes a private copy; dropping that would drop the breakpoint, so then nothing is
    /// dropped). Read-only data and every writable mapping are left alone: some of their pages are private copies.
    private static func releaseCodePages() {
        // `FileSystem.read` reads a file of `/proc`, whose size `stat` does not tell, until its end.
        guard let executable = executablePath(), let maps = (try? FileSystem.read("/proc/self/smaps")) ?? nil else {
            return
        }
        for mapping in CodeMapping.parse(smaps: maps, executable: executable) where mapping.anonymousKilobytes == 0 {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), mapping.end - mapping.start, MADV_DONTNEED)
        }
    }

    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    #endif
}
