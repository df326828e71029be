import Foundation
import SceneSyncCore
import Synchronization

/// The harness's full disk (``BlockingIO``'s `sceneWriteFault`): the next write of each scene put here fails with
/// `ENOSPC`, once, wherever it runs (a blocking job, or the engine's loop for a small step).
final class HarnessFaults: Sendable {
    private let state = Mutex<(armed: Set<SceneID>, fired: [SceneID], total: Int)>(([], [], 0))

    /// The next write of `scene` fails.
    func failNextWrite(of scene: SceneID) {
        state.withLock { _ = $0.armed.insert(scene) }
    }

    /// What the engine's writer asks before it writes `scene`.
    func fault(for scene: SceneID) -> Int32? {
        state.withLock { state in
            guard state.armed.remove(scene) != nil else { return nil }
            state.fired.append(scene)
            state.total += 1
            return ENOSPC
        }
    }

    /// How many writes failed so far: a request handed over at this count may be refused by those after it.
    var firedCount: Int { state.withLock { $0.total } }

    /// The scenes whose write failed, one entry a failure, since the last take.
    func takeFired() -> [SceneID] {
        state.withLock { state in
            defer { state.fired = [] }
            return state.fired
        }
    }

    /// No write fails any more (the disk has room again), so that a schedule settles.
    func disarm() {
        state.withLock { $0.armed = [] }
    }
}
