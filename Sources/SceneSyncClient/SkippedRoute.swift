/// An element of a scene that ``ScenePath/routes`` leaves out under an ``UndecodableRoutes`` policy: what it is and
/// why it was left out, so that an app can log it, migrate it, or tell the user.
public struct SkippedRoute: Sendable, Equatable, CustomStringConvertible {
    /// The element's position in the scene's path, root first.
    public var position: Int
    /// The element's tag in a codable scene (`Recipes.Route`, or an older module's name); `nil` in an array scene.
    public var tag: String?
    /// The element's value as the scene file stores it: a JSON text.
    public var json: String
    /// Why it was left out: its own decoding error, or (when it decodes by itself) that the element at the error's
    /// ``SceneSyncClientError/index`` did not decode. Its code is ``SceneSyncClientError/Code/undecodableElement``.
    public var error: SceneSyncClientError

    public init(position: Int, tag: String?, json: String, error: SceneSyncClientError) {
        self.position = position
        self.tag = tag
        self.json = json
        self.error = error
    }

    public var description: String { "\(position): \(tag.map { "\($0) " } ?? "")\(json) (\(error.message))" }
}
