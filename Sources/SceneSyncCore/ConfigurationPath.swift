/// Path handling for configuration values.
///
/// Paths are made absolute and tidied once, at load time, so that the daemon never depends on its working directory
/// afterwards and two spellings of one directory compare equal.
public enum ConfigurationPath {
    /// `path` made absolute against `base` (an absolute directory), with `.` components, repeated and trailing
    /// slashes removed. `..` is kept: resolving it without the file system would be wrong across symbolic links.
    public static func absolute(_ path: String, relativeTo base: String) -> String {
        normalized(path.hasPrefix("/") ? path : base + "/" + path)
    }

    /// An absolute `path` with `.` components, repeated and trailing slashes removed.
    public static func normalized(_ path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + components.joined(separator: "/")
    }

}
