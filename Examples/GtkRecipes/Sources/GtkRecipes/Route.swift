/// Where a window can go: one level of its navigation stack.
///
/// Written the way Swift synthesizes it (`{"recipe":{"id":3}}`, `{"settings":{}}`), tagged `GtkRecipes.Route` in
/// the scene file. A level written by a newer version of the app, with a case this one does not know, decodes as
/// ``unknown`` instead of failing, so the levels above it still show; a level that is not a case at all (another
/// shape, another tag) is left out with everything above it (the `.keepPrefix` policy, see `AppModel.open`).
enum Route: Codable, Hashable, Sendable {
    case recipe(id: Int)
    case settings
    /// A case this version does not know. Written back as `{"unknown":{}}` once the window changes its path.
    case unknown

    /// How the level shows: in the window's list, and as the window's title when it is on top.
    var title: String {
        switch self {
        case .recipe(let id): "Recipe \(id)"
        case .settings: "Settings"
        case .unknown: "Unknown page"
        }
    }

    /// The title of a window showing `routes`: its top level, or the app's name at the root.
    static func title(of routes: [Route]) -> String {
        routes.last?.title ?? "Recipes"
    }

    private enum CodingKeys: String, CodingKey {
        case recipe, settings, unknown
    }

    private enum RecipeKeys: String, CodingKey {
        case id
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.recipe) {
            let recipe = try container.nestedContainer(keyedBy: RecipeKeys.self, forKey: .recipe)
            self = .recipe(id: try recipe.decode(Int.self, forKey: .id))
        } else if container.contains(.settings) {
            self = .settings
        } else {
            self = .unknown
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .recipe(let id):
            var recipe = container.nestedContainer(keyedBy: RecipeKeys.self, forKey: .recipe)
            try recipe.encode(id, forKey: .id)
        case .settings:
            _ = container.nestedContainer(keyedBy: RecipeKeys.self, forKey: .settings)
        case .unknown:
            _ = container.nestedContainer(keyedBy: RecipeKeys.self, forKey: .unknown)
        }
    }
}
