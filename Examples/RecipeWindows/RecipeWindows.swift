import Foundation
import SceneSyncClient

/// A small multi-window app on SceneSyncClient, with plain text for a UI: each "window" keeps its navigation stack in
/// a `ScenePath`, the windows of every running copy follow each other's changes, the windows of the last run are
/// reopened at launch, and quitting reports the background phase so that the daemon snapshots them.
///
/// Commands, one per line on standard input:
///
///     open                      a new window
///     push WINDOW recipe 42     go to a recipe (or `settings`) in a window (WINDOW: its number, from 1)
///     pop WINDOW                go back
///     show                      print every window
///     quit                      report the background phase and exit (also at end of input)
///
/// Output lines start with a word a script can match: `window`, `changed`, `saved`, `error`.
@main
struct RecipeWindows {
    static let app = "com.example.Recipes"

    static func main() async {
        let session = SceneSyncSession(
            socketPath: CommandLine.arguments.dropFirst().first, clientName: "recipe-windows")
        var windows: [ScenePath<Route>] = []
        var followers: [Task<Void, Never>] = []
        func open(_ scene: String) async throws {
            let path = try await session.path(scene, as: Route.self)
            windows.append(path)
            say("window \(windows.count) \(scene): \(describe(path.routes))")
            followers.append(follow(path, number: windows.count))
        }
        do {
            // Reopen the windows of the last run: the daemon restored them from its snapshot.
            let scenes = try await session.sceneIDs(matching: app + ".*")
            for scene in scenes { try await open(scene) }
            if scenes.isEmpty { try await open(try SceneSyncSession.newSceneID(prefix: app)) }
        } catch {
            say("error \(error)")
            exit(1)
        }

        for await line in StandardInput.lines() {
            let words = line.split(separator: " ")
            do {
                switch words.first {
                case "open":
                    try await open(try SceneSyncSession.newSceneID(prefix: app))
                case "push":
                    let (window, rest) = try pick(words, in: windows)
                    guard let route = Route(words: rest) else { throw Usage("push WINDOW recipe N | settings") }
                    try await window.update { $0.append(route) }
                    say("window \(number(window, in: windows)): \(describe(window.routes))")
                case "pop":
                    let (window, _) = try pick(words, in: windows)
                    try await window.update { routes in _ = routes.popLast() }
                    say("window \(number(window, in: windows)): \(describe(window.routes))")
                case "show":
                    for (index, window) in windows.enumerated() {
                        say("window \(index + 1): \(describe(window.routes))")
                    }
                case "quit":
                    break
                default:
                    throw Usage("open | push WINDOW recipe N | pop WINDOW | show | quit")
                }
            } catch {
                say("error \(error)")
            }
            if words.first == "quit" { break }
        }

        // Going away: every window's state goes into the daemon's snapshot before the process ends.
        for task in followers { task.cancel() }
        for (index, window) in windows.enumerated() {
            do {
                let snapshot = try await session.phase(.background, scene: window.scene.rawValue)
                say("saved \(index + 1) at revision \(snapshot?.revision ?? 0)")
            } catch {
                say("error saving window \(index + 1): \(error)")
            }
        }
    }

    /// Prints every change another window or process makes to this window, and what goes wrong in the background.
    static func follow(_ path: ScenePath<Route>, number: Int) -> Task<Void, Never> {
        Task {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await routes in path.changes { say("changed \(number): \(describe(routes))") }
                }
                group.addTask {
                    for await failure in path.failures { say("error window \(number): \(failure)") }
                }
            }
        }
    }

    static func pick(_ words: [Substring], in windows: [ScenePath<Route>]) throws -> (ScenePath<Route>, [Substring]) {
        guard words.count > 1, let index = Int(words[1]), windows.indices.contains(index - 1) else {
            throw Usage("no such window; there are \(windows.count)")
        }
        return (windows[index - 1], Array(words.dropFirst(2)))
    }

    static func number(_ window: ScenePath<Route>, in windows: [ScenePath<Route>]) -> Int {
        (windows.firstIndex { $0 === window } ?? 0) + 1
    }

    static func describe(_ routes: [Route]) -> String {
        routes.isEmpty ? "(root)" : routes.map(\.description).joined(separator: " > ")
    }

    /// One line, written at once: standard output is often a pipe, which `print` would buffer. (Not `fflush`:
    /// flushing every stream would wait for standard input's lock, which the reader holds while it waits.)
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

struct Usage: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = "usage: " + description }
}
