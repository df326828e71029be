import SceneSyncCore

extension MirrorState {
    /// Values set through ``ScenePath/routes`` and the background writer that writes them as edits (``PathEdit``):
    /// while either is there, the mirror shows the binding's value rather than the daemon's.
    struct Binding {
        /// The latest value the writer has not taken yet: values set faster than they are written are coalesced.
        var value: [Route]?
        var writerRunning = false
        /// The path the binding's values are edits of: the view when the first value was set, then what the last
        /// write started from.
        var base: [Element] = []
        /// Where the last write landed, once it landed on another writer's newer path: the binding's next value is
        /// an edit of the base, so it is rebased onto that path before it is written.
        var landing: Landing?
        /// A write of the binding was applied on top of another writer's change: what the binding set is not
        /// what the scene holds, so the scene's routes are reported when the writer stops.
        var rebased = false

        /// Nothing of the binding is pending, so what the mirror shows follows the daemon again.
        var idle: Bool { value == nil && !writerRunning }
    }

    /// A write of the binding that landed: the view it was applied to, and the view it made.
    struct Landing {
        var onto: [Element]
        var ontoRoutes: [Route]
        var result: [Element]
        var resultRoutes: [Route]
    }

    /// What the background writer is to do next.
    enum BindingJob {
        /// Write this edit, on top of whatever the scene is when it is written.
        case write(PathEdit<Route>)
        /// The binding's value could not be made into an edit; it is dropped and the failure reported.
        case dropped(Outcome)
        /// Nothing is left: the writer stops.
        case stop(Outcome, [CheckedContinuation<Void, Never>])
    }

    /// `routes` was set: show it at once; returns whether the background writer must be started.
    mutating func setFromBinding(_ routes: [Route]) -> Bool {
        if binding.idle {
            binding.base = confirmed.view
            binding.landing = nil
            binding.rebased = false
        }
        shown = routes
        binding.value = routes
        guard !binding.writerRunning else { return false }
        binding.writerRunning = true
        return true
    }

    /// The next edit for the background writer. `encode` turns routes into elements (the caller's ``RouteCoding``).
    mutating func takeBindingValue(
        encode: ([Route]) throws(SceneSyncClientError) -> [Element]
    ) -> BindingJob {
        guard let value = binding.value else { return stopWriter() }
        binding.value = nil
        let elements: [Element]
        do {
            elements = try encode(value)
        } catch {
            return .dropped(dropBinding(error))
        }
        var target = (elements: elements, routes: value)
        if let landing = binding.landing {
            // The value is an edit of the base; the last write turned the base into `landing.result` on top of
            // another writer's path, so the same edit on that path is what the user meant.
            let edit = PathEdit(from: binding.base, to: elements, routes: value)
            guard let rebased = edit.apply(to: landing.onto, routes: landing.ontoRoutes) else {
                return .dropped(dropBinding(Self.dropped(edit)))
            }
            target = rebased
            binding.base = landing.result
            binding.landing = nil
        }
        return .write(PathEdit(from: binding.base, to: target.elements, routes: target.routes))
    }

    /// A write of the binding landed: `onto` is the view it was applied to, `committed` what it made (nil when
    /// there was nothing to write, the view already being the result).
    mutating func bindingWriteLanded(
        onto: ConfirmedScene<Route>, result: ConfirmedScene<Route>, committed: Bool
    )
        -> Outcome
    {
        let outcome = endWrite(committed: committed ? result : nil)
        if onto.view != binding.base { binding.rebased = true }
        binding.landing = Landing(
            onto: onto.view, ontoRoutes: onto.routes, result: result.view, resultRoutes: result.routes)
        return outcome
    }

    /// A write of the binding failed or no longer applies: the binding's values go (each later one was an edit of
    /// it), the daemon's path comes back in ``shown`` and on ``ScenePath/changes``, and the failure is reported.
    /// `writing` when the write had begun (``beginWrite()``), so that it ends too.
    mutating func bindingWriteFailed(_ error: SceneSyncClientError, writing: Bool) -> Outcome {
        var outcome = writing ? endWrite(committed: nil) : Outcome()
        let dropped = dropBinding(error)
        outcome.emissions += dropped.emissions
        outcome.listeners = listeners.all
        return outcome
    }

    private mutating func dropBinding(_ error: SceneSyncClientError) -> Outcome {
        binding.value = nil
        binding.landing = nil
        binding.rebased = false
        var outcome = Outcome()
        outcome.emissions = [.failure(error), .routes(confirmed.routes)]
        outcome.listeners = listeners.all
        return outcome
    }

    /// No value is left: the mirror follows the daemon again. Returns the tasks waiting for the writes to finish.
    private mutating func stopWriter() -> BindingJob {
        binding.writerRunning = false
        binding.landing = nil
        var outcome = Outcome()
        shown = confirmed.routes
        outcome.shownChanged = true
        if binding.rebased {
            // The scene holds the binding's edits on top of another writer's change, which a reader of `changes`
            // has not seen in full.
            outcome.emissions = [.routes(confirmed.routes)]
            outcome.listeners = listeners.all
            binding.rebased = false
        }
        // An update still in flight resumes the waiters when it ends.
        guard writes.count == 0 else { return .stop(outcome, []) }
        let waiters = flushWaiters
        flushWaiters = []
        return .stop(outcome, waiters)
    }

    static func dropped(_ edit: PathEdit<Route>) -> SceneSyncClientError {
        let what =
            edit.popped.isEmpty
            ? "pushing \(edit.pushed.count) route(s) on top of \(edit.kept.count)"
            : "popping \(edit.popped.count) route(s) above \(edit.kept.count)"
        return SceneSyncClientError(
            .writeDropped,
            "a value set through routes was not written: another writer changed the part of the path it kept "
                + "(\(what)), so the newer path shows instead")
    }
}
