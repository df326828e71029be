// swift-format-ignore-file
// (The marked region is the README's code as printed there, aligned comments included.)

// `ReadmeTests` runs the README's "Integrating your app" code, as written, against a real daemon. The regions between
// the `README:` markers, here and in SceneFileBlock.swift, are that section's swift blocks, byte for byte once their
// indentation is taken off (the test compares them, so the README cannot drift from code that compiles and runs). The
// rest is the harness around them (Harness.swift): `show`, the README's stand-in for an app's UI, the choice of
// block, and a report of what the block left in its scene, which the test checks against the daemon.
//
//     readme-integration              runs the ScenePath block (the first)
//     readme-integration scene-file   runs the SceneFile block (the second)
//
// The first block holds an `import` and a type, so it must stand at the top level of this file; the second block
// runs from here before it, and ends the process.

#if canImport(Glibc)
import Glibc
#endif

if CommandLine.arguments.dropFirst().first == "scene-file" {
    try runSceneFileBlock()
    exit(0)
}

// README: begin ScenePath
import SceneSyncClient

enum Route: Codable, Hashable, Sendable { case recipe(id: Int), settings }

let session = SceneSyncSession()                                  // one per process; connects on first use
let path = try await session.path("com.example.Recipes.window-1", as: Route.self)  // a ScenePath<Route>
show(path.routes)                                                 // the stack, root first
try await path.update { $0.append(.recipe(id: 42)) }              // compare-and-set, retried on a conflict
Task { for await routes in path.changes { show(routes) } }            // changes made by anyone else
try await session.phase(.background, scene: "com.example.Recipes.window-1")  // returns once the snapshot is written
// README: end ScenePath

try report(path)
