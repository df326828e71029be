#if canImport(Glibc)
import Glibc
#endif

extension PrivatePostgres {
    /// Runs a tool as the cluster's owner (`nobody` under root), so that what it creates belongs to the server.
    func runAsOwner(_ executable: String, _ arguments: [String]) throws(PrivatePostgresError) {
        _ = try run(executable, arguments, asOwner: true)
    }

    /// Runs `executable` to its end and returns what it printed (standard output and error); a status other than 0
    /// throws with that output. The child gets no descriptor of ours beyond its standard ones: a server started by
    /// a test must not hold another test's pipe or socket open.
    func run(_ executable: String, _ arguments: [String], asOwner: Bool) throws(PrivatePostgresError) -> String {
        var argv = [executable] + arguments
        if asOwner, getuid() == 0 { argv = ["/usr/sbin/runuser", "-u", "nobody", "--"] + argv }
        return try Self.run(argv, outputIn: directory)
    }

    /// Runs `executable` as the caller, with its output in a scratch file under `/tmp`: for the tools asked before
    /// a cluster directory exists (`pg_config`).
    static func capture(_ executable: String, _ arguments: [String]) throws(PrivatePostgresError) -> String {
        try run([executable] + arguments, outputIn: "/tmp")
    }

    private static func run(_ argv: [String], outputIn directory: String) throws(PrivatePostgresError) -> String {
        let executable = argv[0]
        let arguments = Array(argv.dropFirst())
        let output = directory + "/cmd.\(UInt64.random(in: 0...UInt64.max)).out"
        var environment = ["LC_ALL=C.UTF-8"]
        for key in ["PATH", "LD_LIBRARY_PATH", "TZ"] {
            if let value = getenv(key) { environment.append("\(key)=\(String(cString: value))") }
        }
        let pid = try spawn(argv, environment: environment, output: output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw .system("waitpid for \(executable)", errno) }
        }
        let text = String(decoding: ScratchFiles.read(output) ?? [], as: UTF8.self)
        unlink(output)
        guard status == 0 else {
            let name = executable.split(separator: "/").last.map(String.init) ?? executable
            throw PrivatePostgresError("\(name) \(arguments.first ?? "") failed (wait status \(status)):\n\(text)")
        }
        return text
    }

    private static func spawn(
        _ arguments: [String], environment: [String], output: String
    ) throws(PrivatePostgresError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard SpawnActions.closeFrom(&actions, 3) == 0 else {
            throw PrivatePostgresError("posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or newer)")
        }
        // The owner may not be allowed into the caller's working directory.
        guard SpawnActions.changeDirectory(&actions, "/") == 0 else {
            throw PrivatePostgresError("posix_spawn_file_actions_addchdir_np is missing (glibc 2.29 or newer)")
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else { throw .system("spawn \(arguments[0])", result) }
        return pid
    }

    /// Writes `text` to a new file that belongs to the cluster's owner.
    func writeOwnedFile(_ path: String, _ text: String, mode: mode_t) throws(PrivatePostgresError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .system("create \(path)", errno) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw .system("write \(path)", errno) }
        guard fchmod(fd, mode) == 0 else { throw .system("chmod \(path)", errno) }
        if getuid() == 0, fchown(fd, Self.nobody, Self.nobody) != 0 { throw .system("chown \(path)", errno) }
    }

    /// A port on 127.0.0.1 that nothing listens on now (the kernel's pick for a bind to port 0).
    static func freeLoopbackPort() throws(PrivatePostgresError) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw .system("bind 127.0.0.1:0", errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Seconds on the monotonic clock.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
