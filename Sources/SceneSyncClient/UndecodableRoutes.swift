/// What a ``ScenePath`` does with a scene whose elements its `Route` no longer decodes: after an app update that
/// renamed or removed a route case, or renamed its module, the scenes the older version wrote still hold them.
///
/// Whatever the policy, nothing is written for it: the scene file keeps the older elements byte for byte (an older
/// copy of the app still finds them) until the app itself changes the path. A struct rather than an enum, so that
/// more policies can come without breaking an app's `switch`.
public struct UndecodableRoutes: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case fail
        case keepPrefix
        case startAtRoot
    }

    let kind: Kind

    /// ``SceneSyncSession/path(_:as:undecodable:)`` throws, naming the element's position, its tag and why it did
    /// not decode; a later change holding such an element is reported on ``ScenePath/failures`` and
    /// ``ScenePath/routes`` keeps its last good value. For apps that want to know rather than recover.
    public static let fail = UndecodableRoutes(kind: .fail)

    /// ``ScenePath/routes`` is the longest root-first run of elements that decode: the window opens where the user
    /// was, as far as this version can show it. The rest, from the first element that does not decode to the top,
    /// is in ``ScenePath/skipped``.
    public static let keepPrefix = UndecodableRoutes(kind: .keepPrefix)

    /// ``ScenePath/routes`` is empty when any element does not decode, and every element is in
    /// ``ScenePath/skipped``: the window opens at its root, as SwiftUI's own sample does on a decoding error.
    public static let startAtRoot = UndecodableRoutes(kind: .startAtRoot)

    public var description: String {
        switch kind {
        case .fail: "fail"
        case .keepPrefix: "keepPrefix"
        case .startAtRoot: "startAtRoot"
        }
    }
}
