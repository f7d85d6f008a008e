import Foundation

/// When a catch-up should give way to a rebuild beside the index: a pure function of what the catch-up
/// has measured so far.
///
/// A catch-up's cost grows with its backlog — every saved change, and every item that shows a changed
/// object — while a rebuild's grows with the store. Neither is known ahead (how many places a country's
/// change re-indexes depends on what changed), so the catch-up measures itself: once it has run for
/// `minimumSeconds`, it projects the rest of the backlog at the rate it has had, and a rebuild at the
/// rate it has been writing items (every object written once; a rebuild's writes are mostly unchanged
/// items, cheaper than a catch-up's updates, so the projection is conservative). The rebuild wins when
/// the catch-up's remainder is more than `factor` times longer.
public struct RebuildPolicy: Sendable, Hashable {
    /// How long a catch-up runs before it is judged: shorter runs measure noise.
    public var minimumSeconds = 1.0
    /// How much longer the rest of the catch-up must be than a rebuild.
    public var factor = 1.5
    /// Backlogs smaller than this many changes are always caught up.
    public var minimumChanges = 2_000

    /// The default policy.
    public init() {}

    /// What the catch-up measured, and the projection made from it.
    public struct Estimate: Sendable, Hashable {
        public var elapsed: Double
        public var changesDone: Int, changesLeft: Int
        public var itemsWritten: Int
        public var objectCount: Int
        /// Seconds the rest of the catch-up would take at its rate so far.
        public var catchUpSeconds: Double { changesDone > 0 ? elapsed * Double(changesLeft) / Double(changesDone) : .infinity }
        /// Seconds a rebuild would take at the rate items have been written.
        public var rebuildSeconds: Double { itemsWritten > 0 ? elapsed * Double(objectCount) / Double(itemsWritten) : .infinity }
    }

    /// Whether to stop catching up and rebuild.
    public func prefersRebuild(_ estimate: Estimate) -> Bool {
        estimate.elapsed >= minimumSeconds && estimate.changesDone + estimate.changesLeft >= minimumChanges
            && estimate.catchUpSeconds.isFinite && estimate.rebuildSeconds.isFinite
            && estimate.catchUpSeconds > factor * estimate.rebuildSeconds
    }
}
