import Testing

@testable import SceneSyncDaemon

/// The `sync` barriers as a value: the shell creates a cookie's file on the blocking executor, so its marker may be
/// merged before the waiter is registered.
@Suite struct SyncBarriersTests {
    @Test func aMarkerMergedWhileItsFileIsCreatedLetsTheWaiterGoOnAtOnce() {
        var barriers = SyncBarriers<Int>()
        let cookie = barriers.newCookie()
        #expect(barriers.waitingCookies == [cookie])
        #expect(barriers.arrived(cookie).isEmpty)
        let waits = barriers.wait(on: cookie, 1)
        #expect(!waits, "the waiter would wait for a marker that already came")
        #expect(barriers.waitingCookies.isEmpty)
    }

    @Test func aWaiterRegisteredFirstIsHandedBackByItsMarkerOnly() {
        var barriers = SyncBarriers<Int>()
        let first = barriers.newCookie()
        let second = barriers.newCookie()
        let firstWaits = barriers.wait(on: first, 1)
        let secondWaits = barriers.wait(on: second, 2)
        #expect(firstWaits && secondWaits)
        #expect(barriers.arrived(first) == [1])
        #expect(barriers.waitingCookies == [second])
        #expect(barriers.answerAll() == [2])
    }

    @Test func aCookieWhoseFileCouldNotBeCreatedWaitsForNothing() {
        var barriers = SyncBarriers<Int>()
        let cookie = barriers.newCookie()
        barriers.cancel(cookie)
        #expect(barriers.waitingCookies.isEmpty)
        #expect(barriers.answerAll().isEmpty)
    }

    @Test func aBulkStepAnswersTheBarriersAskedForBeforeIt() {
        var barriers = SyncBarriers<Int>()
        let asked = barriers.newCookie()
        let askedWaits = barriers.wait(on: asked, 1)
        #expect(askedWaits)
        let before = barriers.waitingCookies
        let later = barriers.newCookie()
        let answered = barriers.answer(before)
        #expect(answered.map(\.cookie) == [asked] && answered.flatMap(\.waiters) == [1])
        let laterWaits = barriers.wait(on: later, 2)
        #expect(laterWaits, "a barrier asked for after the step began was answered by it")
    }
}
