/// The lifecycle phase of a scene, as an app reports it with the `phase` op (SwiftUI's `ScenePhase`).
///
/// `background` matters to the daemon: it is the moment the app may be suspended or killed, so the daemon writes a
/// snapshot before it answers. The daemon also keeps each scene's last reported phase (``SceneState/phase``): it
/// tells an app at its next launch whether a window was closed cleanly or was still showing when its process stopped.
/// The daemon and the client share this one type, so that a phase the daemon accepts is one the client can name.
public enum ScenePhase: String, Sendable, Equatable, CaseIterable {
    case active
    case inactive
    case background
}
