import CGtk4

#if canImport(Glibc)
import Glibc
#endif

/// GTK's main loop, GLib's default main context, as the place where the app's work runs.
///
/// GTK is used from one thread only, the one that runs the loop. Work from elsewhere (a ``ScenePath``'s changes,
/// which arrive on the library's own tasks) gets there through an idle source: `g_idle_add` is safe from any thread
/// and wakes the loop up. Nothing here goes through the main actor, whose executor GTK's loop never runs.
enum MainLoop {
    /// Runs `work` on the loop's thread, at its next turn: the `deliver` hook of ``ScenePath/onChange(deliver:_:)``.
    static func schedule(_ work: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(work)).toOpaque()
        g_idle_add(
            { data in
                guard let data else { return gboolean(0) }
                Unmanaged<Work>.fromOpaque(data).takeRetainedValue().run()
                return gboolean(0)  // G_SOURCE_REMOVE: once
            }, box)
    }

    /// A closure kept alive by its idle source until it has run.
    private final class Work {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}

/// A value that belongs to the GTK thread, carried through `@Sendable` closures that only use it there (the idea
/// of NIO's `NIOLoopBound`): reading ``value`` from any other thread stops the app.
struct MainThreadBound<Value>: @unchecked Sendable {
    private let wrapped: Value
    private let thread: pthread_t

    /// Binds `value` to the calling thread, which must be the GTK thread.
    init(_ value: Value) {
        wrapped = value
        thread = pthread_self()
    }

    var value: Value {
        precondition(pthread_equal(pthread_self(), thread) != 0, "used off the GTK thread")
        return wrapped
    }
}
