import SceneSyncCore

@testable import SceneSyncDaemon

/// The requests a schedule's clients send: mostly changes, with and without `if_version` (right, or as likely
/// stale), and reads, `sync`s and snapshot triggers among them.
extension HarnessSchedule {
    mutating func randomRequest() -> HarnessRequest {
        let scene = rng.pick(Self.scenes)
        switch rng.below(100) {
        case 0..<35: return .set(scene, values: values(), ifVersion: ifVersion(of: scene))
        case 35..<47:
            return .push(scene, values: (0...rng.below(2)).map { _ in rng.below(10) }, ifVersion: ifVersion(of: scene))
        case 47..<55: return .pop(scene, count: 1 + rng.below(2), ifVersion: ifVersion(of: scene))
        case 55..<61: return .delete(scene, ifVersion: ifVersion(of: scene))
        case 61..<73: return .get(scene)
        case 73..<83: return .sync
        case 83..<93: return .phase(scene, background: rng.below(10) != 0)
        default: return .snapshot
        }
    }

    /// None, the scene's version as the store has it now (the client's last read, which may be stale by the time
    /// the change is decided), or any small version.
    mutating func ifVersion(of scene: SceneID) -> UInt64? {
        switch rng.below(10) {
        case 0..<5: nil
        case 5..<8: harness.core.store.scene(scene)?.version ?? 0
        default: UInt64(rng.below(4))
        }
    }
}
