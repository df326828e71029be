/// The lifecycle phase of a scene, as an app reports it with the `phase` op (SwiftUI's `ScenePhase`).
///
/// `background` matters to the daemon: it is the moment the app may be suspended or killed, so the daemon writes a
/// snapshot before it answers. The daemon and the client share this one type, so that a phase the daemon accepts is
/// one the client can name.
public enum ScenePhase: String, Sendable, Equatable, CaseIterable {
    case active
    case inactive
    case background
}
