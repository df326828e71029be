import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// Where a resilient subscription resumes: only after events that leave the consumer's view complete.
@Suite struct ResumeTrackerTests {
    let scene: SceneState

    init() throws {
        scene = SceneState(
            id: try #require(SceneID("s")), version: 1, created: 1, modified: 1, format: .array, path: [])
    }

    func change(_ revision: UInt64, epoch: String = "e") -> SceneSyncEvent {
        .change(
            ChangeRecord(
                clock: Clock(epoch: epoch, revision: revision), scene: scene.id, kind: .set, version: 1,
                format: .array, path: [], origin: .file))
    }

    @Test func initialStateIsNotAResumePoint() {
        var tracker = ResumeTracker(since: nil)
        #expect(tracker.resumePoint == nil && !tracker.deliveredAnything)
        tracker.observe(.state(scene))
        #expect(tracker.resumePoint == nil && tracker.deliveredAnything)
        tracker.observe(.synced(Clock(epoch: "e", revision: 3)))
        #expect(tracker.resumePoint == Clock(epoch: "e", revision: 3))
    }

    @Test func changesAndHeartbeatsAdvance() {
        var tracker = ResumeTracker(since: Clock(epoch: "e", revision: 1))
        tracker.observe(change(2))
        #expect(tracker.resumePoint == Clock(epoch: "e", revision: 2))
        tracker.observe(.heartbeat(Clock(epoch: "e", revision: 9)))
        #expect(tracker.resumePoint == Clock(epoch: "e", revision: 9))
        tracker.observe(.phase(scene: scene.id, phase: .active))
        #expect(tracker.resumePoint == Clock(epoch: "e", revision: 9))
    }

    @Test func aResyncClearsTheResumePointUntilSynced() {
        var tracker = ResumeTracker(since: Clock(epoch: "old", revision: 7))
        tracker.observe(.resync(.epoch))
        #expect(tracker.resumePoint == nil)
        tracker.observe(.state(scene))
        tracker.observe(.heartbeat(Clock(epoch: "new", revision: 8)))
        #expect(tracker.resumePoint == nil)
        tracker.observe(.synced(Clock(epoch: "new", revision: 8)))
        #expect(tracker.resumePoint == Clock(epoch: "new", revision: 8))
    }

    @Test func connectionNewsIsNotDelivery() {
        var tracker = ResumeTracker(since: nil)
        tracker.observe(.disconnected(reason: "x"))
        tracker.observe(.reconnected(resumedAt: nil))
        #expect(!tracker.deliveredAnything)
    }
}
