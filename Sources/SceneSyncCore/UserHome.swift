#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The home directory that `~` means in §8's paths, for the daemon and for every client that must find what the
/// daemon uses.
///
/// Services started without a login (`env -i`, some units) often lack `HOME`; the password database still knows it.
/// The daemon fills it in before it computes any default path, so every client that computes the same paths has
/// to fill it in the same way, or a `SceneFile` and a daemon started in one environment would disagree.
public enum UserHome {
    /// `environment` with `HOME` set to the password database's home directory of `uid` when it is missing or not an
    /// absolute path (and the database has an absolute one).
    public static func filling(_ environment: [String: String], uid: UInt32) -> [String: String] {
        guard environment["HOME"]?.hasPrefix("/") != true, let home = passwordDatabaseHome(of: uid) else {
            return environment
        }
        var environment = environment
        environment["HOME"] = home
        return environment
    }

    private static func passwordDatabaseHome(of uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        return buffer.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, getpwuid_r(uid, &entry, base, buffer.count, &result) == 0,
                result != nil,
                let directory = entry.pw_dir
            else { return nil }
            let home = String(cString: directory)
            return home.hasPrefix("/") ? home : nil
        }
    }
}
