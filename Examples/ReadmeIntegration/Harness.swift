import Foundation
import SceneSyncClient

/// The README's stand-in for an app's UI: prints what a window would show.
func show(_ routes: [Route]) {
    print("show: \(routes)")
}

/// What the ScenePath block left in its scene, as one JSON line for the test to check against the daemon: the
/// scene, the tag the routes were written with, and the routes (root first) as the mirror holds them.
func report(_ path: ScenePath<Route>) throws {
    try printReport(["scene": path.scene.rawValue], path.routes)
}

/// What the SceneFile block wrote and read back, and the directory its file went to.
func report(_ file: SceneFile, _ routes: [Route]) throws {
    try printReport(["scene": file.scene, "directory": file.directory], routes)
}

private func printReport(_ fields: [String: String], _ routes: [Route]) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    var object: [String: Any] = fields
    object["tag"] = String(reflecting: Route.self)
    object["routes"] = try routes.map {
        try JSONSerialization.jsonObject(with: encoder.encode($0), options: .fragmentsAllowed)
    }
    let line = try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
    print("report: " + String(decoding: line, as: UTF8.self))
}
