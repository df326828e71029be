import CGtk4

/// A GTK widget, as GTK's constructors return it.
typealias Widget = UnsafeMutablePointer<GtkWidget>

/// Swift closures as GTK signal handlers, shortcuts and Unix signal handlers.
///
/// GTK calls C functions with a `gpointer` of context. Each closure is boxed in a ``Callback``, retained for as long
/// as GTK holds the connection (its destroy notify releases it), and reached from one C trampoline per kind of
/// callback. Everything here runs on the GTK thread, so the closures need not be `Sendable`.
final class Callback {
    let run: () -> Bool

    init(_ run: @escaping () -> Bool) { self.run = run }

    /// A callback whose result does not matter to GTK.
    static func action(_ body: @escaping () -> Void) -> Callback {
        Callback {
            body()
            return true
        }
    }

    /// A +1 pointer for GTK to keep; ``release(_:)`` gives it back.
    func retained() -> gpointer { Unmanaged.passRetained(self).toOpaque() }

    static func from(_ data: gpointer?) -> Callback? {
        data.map { Unmanaged<Callback>.fromOpaque($0).takeUnretainedValue() }
    }

    static func release(_ data: gpointer?) {
        if let data { Unmanaged<Callback>.fromOpaque(data).release() }
    }
}

enum Callbacks {
    /// `clicked` of a button.
    static func onClicked(_ button: Widget, _ body: @escaping () -> Void) {
        let trampoline: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            _ = Callback.from(data)?.run()
        }
        connect(button, "clicked", unsafeBitCast(trampoline, to: GCallback.self), .action(body))
    }

    /// `close-request` of a window: `body` returns whether to keep the window open.
    static func onCloseRequest(_ window: Widget, _ body: @escaping () -> Bool) {
        let trampoline: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, data in
            (Callback.from(data)?.run() ?? false) ? 1 : 0
        }
        connect(window, "close-request", unsafeBitCast(trampoline, to: GCallback.self), Callback(body))
    }

    /// A keyboard shortcut (`"<Control>r"`, GTK's accelerator syntax) of everything inside `widget`.
    static func addShortcut(_ trigger: String, to widget: Widget, _ body: @escaping () -> Void) {
        let action = gtk_callback_action_new(
            { _, _, data in (Callback.from(data)?.run() ?? false) ? 1 : 0 },
            Callback.action(body).retained(),
            { data in Callback.release(data) })
        let controller = gtk_shortcut_controller_new()
        let shortcut = gtk_shortcut_new(gtk_shortcut_trigger_parse_string(trigger), action)
        gtk_shortcut_controller_add_shortcut(cgtk_shortcut_controller(controller), shortcut)
        gtk_widget_add_controller(widget, controller)
    }

    /// A Unix signal (SIGTERM, SIGINT), handled on the GTK thread by GLib rather than in a signal handler.
    static func onUnixSignal(_ signal: Int32, _ body: @escaping () -> Void) {
        let trampoline: @convention(c) (gpointer?) -> gboolean = { data in
            _ = Callback.from(data)?.run()
            return 1  // G_SOURCE_CONTINUE
        }
        g_unix_signal_add_full(
            G_PRIORITY_DEFAULT, signal, trampoline, Callback.action(body).retained(), { Callback.release($0) })
    }

    /// `g_signal_connect` (a macro): the connection keeps `callback` until the instance is finalized.
    private static func connect(_ instance: Widget, _ signal: String, _ handler: GCallback, _ callback: Callback) {
        g_signal_connect_data(
            instance, signal, handler, callback.retained(), { data, _ in Callback.release(data) }, GConnectFlags(0))
    }
}
