/// The version of scenesync: `scenesyncd --version`, `scenesync --version` and `hello` all report this one, in one
/// format, so scripts and the package build compare them without special cases.
public enum SceneSyncVersion {
    /// Also the upstream part of the Debian version (`packaging/deb/changelog`), which the package build checks.
    public static let current = "0.1.0"

    /// What `--version` prints for `program`: `scenesyncd 0.1.0`.
    public static func line(for program: String) -> String {
        "\(program) \(current)"
    }
}
