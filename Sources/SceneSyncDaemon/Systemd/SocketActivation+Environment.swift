import CSystemd

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension SocketActivation {
    /// What `sd_listen_fds_with_names` would report for process `pid` under `environment`, without touching any
    /// descriptor: every rule can then be tested with descriptor numbers that belong to the test runner.
    ///
    /// As in libsystemd, variables meant for another process (`LISTEN_PID`) are ignored rather than an error, since
    /// they are inherited from a parent that was socket-activated; but malformed ones, a count of 0 and a name count
    /// that does not match `LISTEN_FDS` are errors, since each means the socket unit and the daemon disagree.
    static func passedSockets(
        environment: [String: String], pid: pid_t
    ) throws(SocketActivationError) -> [InheritedSocket] {
        guard let listenPID = environment["LISTEN_PID"] else { return [] }
        guard let target = pid_t(listenPID), target > 0 else { throw .invalidEnvironment(errno: EINVAL) }
        guard target == pid, let listenFDs = environment["LISTEN_FDS"] else { return [] }
        guard let count = Int32(listenFDs), count > 0, count <= Int32.max - SD_LISTEN_FDS_START else {
            throw .invalidEnvironment(errno: EINVAL)
        }
        let descriptors = SD_LISTEN_FDS_START..<SD_LISTEN_FDS_START + count
        guard let names = environment["LISTEN_FDNAMES"] else {
            return descriptors.map { InheritedSocket(fileDescriptor: $0, name: nil) }
        }
        // Empty names stay in place (libsystemd does not coalesce separators), so each lines up with its descriptor.
        let split = names.split(separator: ":", omittingEmptySubsequences: false)
        guard split.count == count else { throw .invalidEnvironment(errno: EINVAL) }
        return zip(descriptors, split).map { InheritedSocket(fileDescriptor: $0, name: String($1)) }
    }
}
