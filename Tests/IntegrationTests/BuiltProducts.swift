import Foundation

/// Where `swift build` put the executables under test: beside the test bundle, whatever the scratch path.
enum BuiltProducts {
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["SCENESYNC_BIN_DIR"] {
            return URL(fileURLWithPath: override)
        }
        // /proc/self/exe is the test runner binary inside <scratch>/<triple>/<config>/.
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("scenesyncd").path), url.path != "/" {
            url = url.deletingLastPathComponent()
        }
        return url
    }()

    static var scenesyncd: URL { directory.appendingPathComponent("scenesyncd") }
    static var scenesync: URL { directory.appendingPathComponent("scenesync") }
    static var scenesyncBench: URL { directory.appendingPathComponent("scenesync-bench") }
    /// The example app under Examples/RecipeWindows.
    static var recipeWindows: URL { directory.appendingPathComponent("recipe-windows") }
    /// The README's "Integrating your app" code under Examples/ReadmeIntegration.
    static var readmeIntegration: URL { directory.appendingPathComponent("readme-integration") }

    /// The package root, for files the tests read (systemd units, the default configuration).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}

/// A fresh directory under the system temp dir, removed by `remove()`. Unix socket paths must stay under 108 bytes,
/// so names are short.
struct TemporaryDirectory {
    let url: URL

    /// A directory under `base`, the system temp dir unless given.
    init(_ prefix: String = "ss", in base: String? = nil) throws {
        let parent = base.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        let template = parent.appendingPathComponent("\(prefix).XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let created = mkdtemp(&bytes) else { throw POSIXError(.EIO) }
        url = URL(fileURLWithPath: String(cString: created))
    }

    var path: String { url.path }

    func appending(_ name: String) -> URL { url.appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
