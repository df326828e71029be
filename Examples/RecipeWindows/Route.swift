/// Where a window of the recipe app can go: the `Route` of its navigation stack, as a SwiftUI app declares one.
enum Route: Codable, Hashable, Sendable, CustomStringConvertible {
    case recipe(Int)
    case settings

    var description: String {
        switch self {
        case .recipe(let id): "recipe \(id)"
        case .settings: "settings"
        }
    }

    /// `recipe 42` or `settings`, as typed at the prompt.
    init?(words: [Substring]) {
        switch words.first {
        case "settings": self = .settings
        case "recipe":
            if let id = words.dropFirst().first.flatMap({ Int($0) }) { self = .recipe(id) } else { return nil }
        default: return nil
        }
    }
}
