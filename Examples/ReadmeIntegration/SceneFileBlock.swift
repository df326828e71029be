// swift-format-ignore-file
// (The marked region is the README's code as printed there, aligned comments included.)

import SceneSyncClient

/// The README's `SceneFile` block, in a function so that it can run apart from the first block.
func runSceneFileBlock() throws {
    // README: begin SceneFile
    let file = SceneFile(scene: "com.example.Recipes.window-1")   // in this user's scenes directory
    try file.write([Route.recipe(id: 42)])                        // a temp file, then a rename over the scene file
    let routes: [Route] = try file.read(as: Route.self)           // a missing file is an empty path
    // README: end SceneFile
    try report(file, routes)
}
