#if canImport(Glibc)
public import Glibc
#endif

/// glibc's `_np` spawn file actions, which Swift's Glibc module does not declare: looked up once, for every child
/// the tests and their private servers start.
public enum SpawnActions {
    private typealias FileAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias DirectoryAction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static let closeFromFunction: FileAction? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
    ).map { unsafeBitCast($0, to: FileAction.self) }

    private static let changeDirectoryFunction: DirectoryAction? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np"
    ).map { unsafeBitCast($0, to: DirectoryAction.self) }

    /// `posix_spawn_file_actions_addclosefrom_np`: the child closes every descriptor from `fd` on, so that it never
    /// holds another test's pipe or socket open. `-1` where glibc lacks it (before 2.34).
    public static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ fd: Int32) -> Int32 {
        closeFromFunction?(actions, fd) ?? -1
    }

    /// `posix_spawn_file_actions_addchdir_np`; `-1` where glibc lacks it (before 2.29).
    public static func changeDirectory(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String
    ) -> Int32 {
        guard let function = changeDirectoryFunction else { return -1 }
        return path.withCString { function(actions, $0) }
    }
}
