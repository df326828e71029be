import SceneSyncCore

extension Clock {
    /// Where a view at this clock is once it has seen `other`: the later revision in one epoch, `other` in another
    /// (revisions of different epochs do not compare).
    func movedOn(to other: Clock) -> Clock {
        epoch == other.epoch ? Clock(epoch: epoch, revision: max(revision, other.revision)) : other
    }
}
