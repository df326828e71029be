import SceneSyncCore

extension MirrorState {
    /// Values set through ``ScenePath/routes`` and the background writer that writes them as edits (``PathEdit``):
    /// while either is there, the mirror shows the binding's value rather than the daemon's.
    struct Binding {
        /// The latest value the writer has not taken yet: values set faster than they are written are coalesced.
        var value: [Route]?
        var writerRunning = false
        var chain = Chain()
        /// The value whose write is in flight, as the user set it.
        var inFlight: (elements: [Element], routes: [Route])?
        /// A write of the binding was applied on top of another writer's change: what the binding set is not
        /// what the scene holds, so the scene's routes are reported when the writer stops.
        var rebased = false

        /// Nothing of the binding is pending, so what the mirror shows follows the daemon again.
        var idle: Bool { value == nil && !writerRunning }
    }

    /// How the values a user sets map onto the scene. Each value is an edit of what the binding showed when it was
    /// set, and what it showed was the user's own earlier value, not the scene (which other writers change
    /// meanwhile): so every value of a run is taken as one edit of the path the run started from (``userBase``),
    /// applied on top of the path other writers left (``onto``). Values of the user and paths of the scene are
    /// never compared with each other; comparing them would read another writer's push as the user's pop.
    struct Chain {
        /// What the binding showed when the run started: the user's values are edits of it.
        var userBase: [Element] = []
        /// The scene's path, as other writers left it, that the run's edit goes on top of.
        var onto: [Element] = []
        var ontoRoutes: [Route] = []
        /// The scene's path after the run's last write: the next write is checked against it.
        var lastTarget: [Element] = []

        /// A run that starts from the scene as it is (`view`, its `routes`).
        init(scene view: [Element] = [], routes: [Route] = []) {
            userBase = view
            onto = view
            ontoRoutes = routes
            lastTarget = view
        }
    }

    /// What the background writer is to do next.
    enum BindingJob {
        /// Write this edit (from the run's last write to the value's target) on top of the scene as it is then.
        case write(PathEdit<Route>)
        /// The binding's value could not be made into an edit; it is dropped and the failure reported.
        case dropped(Outcome)
        /// Nothing is left: the writer stops.
        case stop(Outcome, [CheckedContinuation<Void, Never>])
    }

    /// `routes` was set: show it at once; returns whether the background writer must be started.
    mutating func setFromBinding(_ routes: [Route]) -> Bool {
        if binding.idle {
            binding.chain = Chain(scene: confirmed.view, routes: confirmed.routes)
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
        let run = PathEdit(from: binding.chain.userBase, to: elements, routes: value)
        guard let target = run.apply(to: binding.chain.onto, routes: binding.chain.ontoRoutes) else {
            return .dropped(dropBinding(Self.dropped(run)))
        }
        binding.inFlight = (elements, value)
        return .write(PathEdit(from: binding.chain.lastTarget, to: target.elements, routes: target.routes))
    }

    /// A write of the binding landed: `onto` is the scene it was applied to, `result` what it made (the same scene
    /// when there was nothing to write; `committed` false then).
    mutating func bindingWriteLanded(
        onto: ConfirmedScene<Route>, result: ConfirmedScene<Route>, committed: Bool
    )
        -> Outcome
    {
        let outcome = endWrite(committed: committed ? result : nil)
        let value = binding.inFlight
        binding.inFlight = nil
        if onto.view == binding.chain.lastTarget {
            binding.chain.lastTarget = result.view
            return outcome
        }
        // Another writer changed the scene since the run's last write, and this write went on top of that change.
        binding.rebased = true
        guard let value else { return outcome }
        let run = PathEdit(from: binding.chain.userBase, to: value.elements, routes: value.routes)
        if binding.chain.lastTarget == binding.chain.onto,
            run.apply(to: onto.view, routes: onto.routes)?.elements == result.view
        {
            // The run had written nothing on top yet: the other writer's path is what the run goes on top of now.
            binding.chain.onto = onto.view
            binding.chain.ontoRoutes = onto.routes
        } else {
            // The run's edit cannot be carried over the other writer's change: a new run starts from this value,
            // on the path this write made. Values set from here on are edits of the value, as the user saw it.
            binding.chain = Chain(scene: result.view, routes: result.routes)
            binding.chain.userBase = value.elements
        }
        binding.chain.lastTarget = result.view
        return outcome
    }

    /// A write of the binding failed or no longer applies: the binding's values go (each later one was an edit of
    /// it), the daemon's path comes back in ``shown`` and on ``ScenePath/changes``, and the failure is reported.
    /// `writing` when the write had begun (``beginWrite()``), so that it ends too.
    mutating func bindingWriteFailed(_ error: SceneSyncClientError, writing: Bool) -> Outcome {
        var outcome = writing ? endWrite(committed: nil) : Outcome()
        binding.inFlight = nil
        let dropped = dropBinding(error)
        outcome.emissions += dropped.emissions
        outcome.shownChanged = true
        outcome.listeners = listeners.all
        return outcome
    }

    /// The run ends: the scene shows again, and a value set from now on (an `onChange` handler that reacts to the
    /// newer path, say) is an edit of it.
    private mutating func dropBinding(_ error: SceneSyncClientError) -> Outcome {
        binding.value = nil
        binding.rebased = false
        binding.chain = Chain(scene: confirmed.view, routes: confirmed.routes)
        shown = confirmed.routes
        var outcome = Outcome()
        outcome.shownChanged = true
        outcome.emissions = [.failure(error), .routes(confirmed.routes)]
        outcome.listeners = listeners.all
        return outcome
    }

    /// No value is left: the mirror follows the daemon again. Returns the tasks waiting for the writes to finish.
    private mutating func stopWriter() -> BindingJob {
        binding.writerRunning = false
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
