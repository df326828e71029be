import ArgumentParser

/// Where a scenario keeps its scene files: a tmpfs (`/dev/shm`, like `/run`) or a disk (`$TMPDIR`, like `/var/lib`).
enum Filesystem: String, ExpressibleByArgument, CaseIterable, Sendable {
    case tmpfs
    case disk
}
