import CGtk4
import SceneSyncClient

/// One window: it shows the navigation stack of its scene, root first, and the top level as its title.
///
/// Every change goes through the window's ``ScenePath``: the buttons (and their shortcuts) set ``ScenePath/routes``
/// and show the result at once, and changes made by anyone else (another copy of the app, the CLI, the scene file)
/// come through ``ScenePath/onChange(deliver:_:)``, delivered on GTK's loop by an idle source.
final class RecipeWindow {
    let path: ScenePath<Route>
    private let session: SceneSyncSession
    private let window: Widget
    private let stack: Widget
    private let back: Widget
    private var observation: ChangeObservation?
    private var onClose: ((RecipeWindow) -> Void)?

    var scene: String { path.scene.rawValue }

    init(path: ScenePath<Route>, session: SceneSyncSession, onClose: @escaping (RecipeWindow) -> Void) {
        self.path = path
        self.session = session
        self.onClose = onClose
        window = gtk_window_new()
        gtk_window_set_default_size(cgtk_window(window), 340, 280)

        // The header bar: Back, and the title (the top level).
        let header = gtk_header_bar_new()
        gtk_header_bar_set_decoration_layout(cgtk_header_bar(header), ":close")
        back = gtk_button_new_with_label("Back")
        gtk_widget_set_tooltip_text(back, "Back (Alt+Left)")
        gtk_header_bar_pack_start(cgtk_header_bar(header), back)
        gtk_window_set_titlebar(cgtk_window(window), header)

        // The navigation stack, one line per level; the pages to go to; the scene this window mirrors.
        let content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10)
        gtk_widget_set_margin_top(content, 12)
        gtk_widget_set_margin_bottom(content, 12)
        gtk_widget_set_margin_start(content, 16)
        gtk_widget_set_margin_end(content, 16)
        stack = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4)
        gtk_widget_set_vexpand(stack, 1)
        gtk_box_append(cgtk_box(content), stack)
        let actions = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)
        gtk_box_set_homogeneous(cgtk_box(actions), 1)
        let recipe: Widget = gtk_button_new_with_label("Recipe")
        gtk_widget_set_tooltip_text(recipe, "Open the next recipe (Ctrl+R)")
        gtk_box_append(cgtk_box(actions), recipe)
        let settings: Widget = gtk_button_new_with_label("Settings")
        gtk_widget_set_tooltip_text(settings, "Open the settings (Ctrl+,)")
        gtk_box_append(cgtk_box(actions), settings)
        gtk_box_append(cgtk_box(content), actions)
        let caption = gtk_label_new(path.scene.rawValue.split(separator: ".").last.map(String.init))
        gtk_widget_add_css_class(caption, "dim-label")
        gtk_widget_add_css_class(caption, "caption")
        gtk_box_append(cgtk_box(content), caption)
        gtk_window_set_child(cgtk_window(window), content)

        Callbacks.onClicked(back) { [unowned self] in goBack() }
        Callbacks.onClicked(recipe) { [unowned self] in push(.recipe(id: nextRecipeID())) }
        Callbacks.onClicked(settings) { [unowned self] in push(.settings) }
        Callbacks.addShortcut("<Alt>Left", to: window) { [unowned self] in goBack() }
        Callbacks.addShortcut("<Control>r", to: window) { [unowned self] in push(.recipe(id: nextRecipeID())) }
        Callbacks.addShortcut("<Control>comma", to: window) { [unowned self] in push(.settings) }
        Callbacks.addShortcut("<Control>w", to: window) { [unowned self] in gtk_window_close(cgtk_window(window)) }
        Callbacks.onCloseRequest(window) { [unowned self] in closeRequested() }

        // Other writers' changes: on GTK's loop, through an idle source. The handler holds the window until the
        // observation ends, when the window closes.
        let bound = MainThreadBound(self)
        observation = path.onChange(deliver: MainLoop.schedule) { result in
            bound.value.changed(result)
        }
        show(path.routes)
    }

    /// Shows the window, and tells the daemon that its scene is active (without waiting for the answer).
    func present() {
        gtk_window_present(cgtk_window(window))
        let scene = self.scene
        session.reportPhase(.active, scene: scene) { result in
            if case .failure(let error) = result { Log.error("reporting \(scene) active: \(error)") }
        }
    }

    /// Asks the window to close, as its close button or Ctrl+W does.
    func close() {
        gtk_window_close(cgtk_window(window))
    }

    private func changed(_ result: Result<[Route], SceneSyncClientError>) {
        switch result {
        case .success(let routes):
            show(routes)
        case .failure(let error):
            Log.error("\(scene): \(error)")
            show(path.routes)
        }
    }

    private func push(_ route: Route) {
        var routes = path.routes
        routes.append(route)
        path.routes = routes
        show(routes)
    }

    private func goBack() {
        var routes = path.routes
        guard routes.popLast() != nil else { return }
        path.routes = routes
        show(routes)
    }

    /// The recipe after the last one on the stack.
    private func nextRecipeID() -> Int {
        for route in path.routes.reversed() {
            if case .recipe(let id) = route { return id + 1 }
        }
        return 1
    }

    /// The stack as the window's content, root first with the top in bold, and the top as the title.
    private func show(_ routes: [Route]) {
        while let child = gtk_widget_get_first_child(stack) {
            gtk_box_remove(cgtk_box(stack), child)
        }
        let levels = ["Recipes"] + routes.map(\.title)
        for (depth, title) in levels.enumerated() {
            let label = gtk_label_new(depth == 0 ? title : "› " + title)
            gtk_label_set_xalign(cgtk_label(label), 0)
            gtk_widget_set_margin_start(label, Int32(depth * 14))
            gtk_widget_add_css_class(label, depth == levels.count - 1 ? "heading" : "dim-label")
            gtk_box_append(cgtk_box(stack), label)
        }
        gtk_widget_set_sensitive(back, routes.isEmpty ? 0 : 1)
        let title = Route.title(of: routes)
        gtk_window_set_title(cgtk_window(window), title)
        Log.info("showing \(scene): \(title) (\(routes.count) deep)")
    }

    /// The window closes: its scene goes to the background phase, so that the daemon snapshots it and the next run
    /// reopens it as it is now. The close handler cannot `await`, so it blocks, for a few seconds at most.
    private func closeRequested() -> Bool {
        observation?.cancel()
        observation = nil
        do {
            try session.phase(.background, scene: scene, timeout: .seconds(5))
            Log.info("closed \(scene): background")
        } catch {
            Log.error("closed \(scene), but the background phase was not reported: \(error)")
        }
        path.close()
        onClose?(self)
        onClose = nil
        return false  // GTK destroys the window
    }
}
