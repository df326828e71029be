import CGtk4
import SceneSyncClient

#if canImport(Glibc)
import Glibc
#endif

/// A GTK 4 recipe app whose windows keep their navigation in scenesync: every running copy shows the same windows
/// and follows the others' changes, and the next run reopens them (see README.md).
@main
struct GtkRecipes {
    static func main() {
        guard gtk_init_check() != 0 else {
            Log.error("cannot open a display (DISPLAY=\(getenv("DISPLAY").map { String(cString: $0) } ?? "unset"))")
            exit(1)
        }
        let app = RecipesApp(session: SceneSyncSession(clientName: "gtk-recipes"))
        do {
            try app.openWindows()
        } catch {
            Log.error("cannot open the windows: \(error)")
            exit(1)
        }
        app.run()
    }
}

/// The app: its windows, and the main loop that runs until the last one closes.
final class RecipesApp {
    /// The app's scenes are `com.example.GtkRecipes.window-<hex>`.
    static let scenePrefix = "com.example.GtkRecipes"
    /// How long a blocking call to the daemon may take on the GTK thread.
    static let timeout = Duration.seconds(10)

    let session: SceneSyncSession
    private var windows: [RecipeWindow] = []
    private let loop: OpaquePointer

    init(session: SceneSyncSession) {
        self.session = session
        loop = g_main_loop_new(nil, 0)
    }

    /// Reopens the windows of the last run, or opens a new one when there were none.
    ///
    /// A window whose last phase is `.active` or `.inactive` was showing when its process stopped without closing
    /// it (a crash, a kill): it comes back at its root, in case what it showed is what crashed the app, unless
    /// another copy of the app is running, which may be showing it now (``OtherCopies``). A window that was closed
    /// (`.background`) comes back as it was. A level that no longer decodes (an older or newer version of
    /// the app wrote it) is left out with the levels above it (`.keepPrefix`); the scene file keeps them until the
    /// window changes its path.
    func openWindows() throws {
        let othersRunning = OtherCopies.running()
        let scenes = try session.sceneIDs(matching: Self.scenePrefix + ".*", timeout: Self.timeout)
        for scene in scenes {
            let path = try session.path(scene, as: Route.self, undecodable: .keepPrefix, timeout: Self.timeout)
            let lastPhase = path.lastPhase.map(\.rawValue) ?? "none"
            if path.lastPhase == .active || path.lastPhase == .inactive, othersRunning {
                Log.info("reopening \(scene) (last phase \(lastPhase): another copy shows it)")
            } else if path.lastPhase == .active || path.lastPhase == .inactive {
                Log.info("reopening \(scene) at its root: its last phase is \(lastPhase), so it stopped while showing")
                path.routes = []
            } else {
                Log.info("reopening \(scene) (last phase \(lastPhase))")
            }
            for skipped in path.skipped {
                Log.error("\(scene): left out level \(skipped)")
            }
            open(path)
        }
        if scenes.isEmpty {
            let scene = try SceneSyncSession.newSceneID(prefix: Self.scenePrefix)
            let path = try session.path(scene, as: Route.self, undecodable: .keepPrefix, timeout: Self.timeout)
            Log.info("opening a new window, \(scene)")
            // Writing the empty path creates the scene, so that other copies and the next run find the window.
            Task {
                do {
                    try await path.update { _ in }
                } catch {
                    Log.error("creating \(scene): \(error)")
                }
            }
            open(path)
        }
    }

    /// Runs GTK's loop until the last window has closed. SIGTERM and SIGINT close every window, as quitting does.
    func run() {
        for signal in [SIGTERM, SIGINT] {
            Callbacks.onUnixSignal(signal) { [unowned self] in
                Log.info("quitting")
                for window in windows { window.close() }
            }
        }
        g_main_loop_run(loop)
        session.close()
    }

    private func open(_ path: ScenePath<Route>) {
        let window = RecipeWindow(path: path, session: session) { [unowned self] closed in
            windows.removeAll { $0 === closed }
            if windows.isEmpty { g_main_loop_quit(loop) }
        }
        windows.append(window)
        window.present()
    }
}
