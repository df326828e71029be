import CRenameAt2
import SceneSyncTestKit

#if canImport(Glibc)
import Glibc
#endif

/// The least a client change must cost whoever writes it to its scene file, measured beside the daemon: a loop that
/// writes the content to a temp file, exchanges it with the scene file (`renameat2` `RENAME_EXCHANGE`), reads back
/// what it displaced (as the daemon does, to see whether an app wrote meanwhile) and unlinks it, paced at the same
/// rate as the daemon's run, on the same file system. A peer without files (Redis) plus this floor is what the daemon
/// could cost at best.
enum WriteFloor {
    /// CPU per write in microseconds, on the calling thread, over `duration` seconds at `rate` writes per second.
    static func measure(
        content: [UInt8], rate: Int, duration: Double, filesystem: Filesystem = .tmpfs
    ) throws(BenchError) -> Double {
        let directory = try BenchDaemon.makeTemporaryDirectory(in: BenchDaemon.root(filesystem))
        defer { ScratchFiles.removeTree(directory) }
        let scene = directory + "/floor.json"
        let temp = directory + "/.floor.json.tmp"
        try BenchDaemon.writeFile(scene, content)
        var buffer = [UInt8](repeating: 0, count: max(4096, content.count * 2))
        let interval = Int64(1e9 / Double(rate))
        let start = Monotonic.now()
        let end = start + Int64(duration * 1e9)
        let cpuBefore = Monotonic.threadCPU()
        var writes = 0
        var next = start
        while next < end {
            Monotonic.sleep(until: next)
            next += interval
            try BenchDaemon.writeFile(temp, content)
            guard scenesync_rename2(temp, scene, SCENESYNC_RENAME_EXCHANGE) == 0 else {
                throw .system("renameat2 \(temp)", errno)
            }
            // What the exchange displaced is now at the temp name: read, compared by the daemon, then removed.
            let fd = open(temp, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .system("open \(temp)", errno) }
            _ = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            close(fd)
            unlink(temp)
            writes += 1
        }
        let cpu = Monotonic.threadCPU() - cpuBefore
        return writes > 0 ? Double(cpu) / Double(writes) / 1e3 : 0
    }
}
