#if canImport(Glibc)
import Glibc
#endif

extension PrivatePostgres {
    /// The oldest server major version the daemon supports (SPEC §9): older installations are not used.
    public static let minimumMajorVersion = 15

    /// The directory of `initdb`, `pg_ctl` and `psql` of a PostgreSQL server of 15 or newer, or `nil` when none is
    /// installed.
    ///
    /// `pg_config --bindir` names it where the server's development files are installed; Debian's server packages
    /// put each major version in `/usr/lib/postgresql/<major>/bin` without a `pg_config` of their own, so the newest
    /// such directory with a `pg_ctl` is used otherwise. A test run that depends on a fixed version would skip every
    /// cluster test on a machine with another one.
    public static let binaries: String? = {
        if let directory = pgConfigBinDirectory(), isServerDirectory(directory) { return directory }
        return debianServerDirectories().first
    }()

    public static var isAvailable: Bool { binaries != nil }

    /// Why no server can be started here, for the error that a test or the benchmark reports.
    static var unavailableReason: String {
        "no PostgreSQL \(minimumMajorVersion) or newer (neither `pg_config --bindir` nor /usr/lib/postgresql/*/bin "
            + "has pg_ctl): run scripts/install-deps.sh test"
    }

    private static func isServerDirectory(_ directory: String) -> Bool {
        access(directory + "/pg_ctl", X_OK) == 0 && access(directory + "/initdb", X_OK) == 0
    }

    /// `/usr/lib/postgresql/<major>/bin` for every installed major version of 15 or newer, newest first.
    private static func debianServerDirectories() -> [String] {
        guard let directory = opendir("/usr/lib/postgresql") else { return [] }
        defer { closedir(directory) }
        var majors: [Int] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let major = Int(name), major >= minimumMajorVersion { majors.append(major) }
        }
        return majors.sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }.filter(isServerDirectory)
    }

    /// What `pg_config --bindir` prints, when a `pg_config` is on the usual paths and its server is new enough.
    private static func pgConfigBinDirectory() -> String? {
        let candidates = ["/usr/bin/pg_config", "/usr/local/bin/pg_config", "/usr/local/pgsql/bin/pg_config"]
        guard let pgConfig = candidates.first(where: { access($0, X_OK) == 0 }),
            let version = try? capture(pgConfig, ["--version"]),  // a broken pg_config: try the Debian directories
            let major = majorVersion(of: version), major >= minimumMajorVersion,
            let directory = try? capture(pgConfig, ["--bindir"])  // as above: `binaries` looks there next
        else { return nil }
        return directory.trimmingCharacters(inWhitespace: true)
    }

    /// 16 of `PostgreSQL 16.4 (Debian 16.4-1)`.
    static func majorVersion(of versionLine: String) -> Int? {
        let words = versionLine.split(separator: " ")
        guard let index = words.firstIndex(of: "PostgreSQL"), index + 1 < words.count else { return nil }
        return Int(words[index + 1].prefix { $0.isNumber })
    }
}

extension String {
    fileprivate func trimmingCharacters(inWhitespace: Bool) -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        return String(text)
    }
}
