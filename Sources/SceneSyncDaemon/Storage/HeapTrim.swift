#if canImport(Glibc)
import Glibc

/// glibc's `malloc_trim`, which Swift's Glibc module does not export (it lives in `<malloc.h>`).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32
#endif

/// Gives the memory that a burst of short-lived allocations freed back to the system.
///
/// A start with many scenes reads a large snapshot, or every scene file, on several threads, and frees most of what
/// it allocated (the snapshot's bytes, its spans, the file index, the decoded chunks) while the store it built stays.
/// glibc keeps those freed pages in each thread's arena, between live blocks where its automatic trim never reaches,
/// so a restarted daemon held about a quarter more resident memory than the same store built by changes. One trim
/// after the start-up merge returns them; it costs a few milliseconds once.
enum HeapTrim {
    static func returnFreedMemory() {
        #if canImport(Glibc)
        _ = mallocTrim(0)
        #endif
    }
}
