import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

/// What the engine knows of the scene files beyond their content, as a value with plain waiters.
@Suite struct SceneFileStateTests {
    let main = scene("main")
    let side = scene("side")

    @Test func aCloseFreesTheWaitersOfItsSceneOnly() {
        var files = SceneFileState<Int>()
        _ = files.take(.modified(main))
        _ = files.take(.modified(side))
        #expect(files.isOpen(main) && files.isOpen(side))
        _ = files.wait(for: main, 1)
        _ = files.wait(for: main, 2)
        _ = files.wait(for: side, 3)
        let freedByMain = files.take(.changed(main))
        #expect(freedByMain == [1, 2])
        #expect(!files.isOpen(main) && files.isOpen(side))
        let freedBySide = files.take(.removed(side))
        #expect(freedBySide == [3])
        #expect(files.openWriters.isEmpty)
    }

    @Test func anOverflowForgetsEveryWriterAndFreesEveryWaiter() {
        var files = SceneFileState<Int>()
        _ = files.take(.modified(main))
        _ = files.take(.modified(side))
        _ = files.wait(for: main, 1)
        _ = files.wait(for: side, 2)
        let freed = files.take(.overflow)
        #expect(freed.sorted() == [1, 2])
        #expect(files.openWriters.isEmpty)
        let again = files.closeAll()
        #expect(again.isEmpty, "no waiter is handed back twice")
    }

    @Test func aWaiterExpiresOnceAndNeverAfterItsClose() {
        var files = SceneFileState<Int>()
        _ = files.take(.modified(main))
        let first = files.wait(for: main, 1)
        let second = files.wait(for: main, 2)
        let expired = files.expire(main, token: second)
        let expiredAgain = files.expire(main, token: second)
        #expect(expired == 2 && expiredAgain == nil)
        let freed = files.take(.changed(main))
        #expect(freed == [1])
        let late = files.expire(main, token: first)
        #expect(late == nil, "the close already freed it")
    }

    @Test func aDeferredMergeIsSaidOnceAndItsLastMergeIsTold() {
        var files = SceneFileState<Int>()
        let firstTime = files.deferMerge(main)
        let secondTime = files.deferMerge(main)
        #expect(firstTime && !secondTime)
        _ = files.deferMerge(side)
        _ = files.take(.modified(side))
        #expect(files.mergesToRetry == [main], "a file still being written is not retried")
        let mainWasLast = files.merged(main)
        let sideWasLast = files.merged(side)
        let sideAgain = files.merged(side)
        #expect(!mainWasLast && sideWasLast)
        #expect(!sideAgain, "only a merge that waited ends the wait")
    }

    @Test func rejectedContentIsWarnedAboutOnceUntilItChanges() {
        var files = SceneFileState<Int>()
        let new = files.rejected(main, digest: 7)
        let same = files.rejected(main, digest: 7)
        #expect(new && !same)
        #expect(files.isRejected(main, digest: 7))
        let changed = files.rejected(main, digest: 8)
        #expect(changed)
        files.replaced([main])
        #expect(!files.isRejected(main, digest: 8))
        let afterReplace = files.rejected(main, digest: 8)
        #expect(afterReplace, "after the daemon replaced the file, the same content is new again")
        files.accepted(main)
        #expect(!files.isRejected(main, digest: 8))
    }

    /// What a rename displaced is an app's write only when the daemon did not know it: content it last read or
    /// wrote, or content it rejected (and warned about) already, is known; anything else must be merged (§3).
    @Test func displacedContentThatWasRejectedAlreadyIsKnown() {
        var store = SceneStore(epoch: "test")
        var files = SceneFileState<Int>()
        let rejected = Array("[1,".utf8)
        let other = Array("[2,".utf8)
        #expect(!files.isKnown(.file(rejected), of: main, in: store), "unknown content is an app's write")
        _ = files.rejected(main, digest: SceneStore.digest(rejected))
        #expect(files.isKnown(.file(rejected), of: main, in: store), "rejected already: not a new write")
        #expect(!files.isKnown(.file(other), of: main, in: store), "other rejected content is new")
        #expect(files.isKnown(.none, of: main, in: store), "no file for a scene that has none")
        #expect(files.isKnown(.unknown, of: main, in: store), "what cannot be told is not merged")
        _ = store.applyFile(main, bytes: Array("[3]".utf8))
        #expect(files.isKnown(.file(Array("[3]".utf8)), of: main, in: store), "the content the store holds")
        #expect(!files.isKnown(.none, of: main, in: store), "a scene whose file vanished")
    }

    @Test func aFailedListingIsLoggedOnceAndItsRecoveryToldOnce() {
        var files = SceneFileState<Int>()
        let recoveredFromNothing = files.listingWorked()
        #expect(!recoveredFromNothing)
        let first = files.listingFailed(reason: "EMFILE")
        let second = files.listingFailed(reason: "ENOMEM")
        #expect(first && !second)
        #expect(files.rescanOwed == "ENOMEM")
        let recovered = files.listingWorked()
        #expect(recovered && files.rescanOwed == nil)
    }
}
