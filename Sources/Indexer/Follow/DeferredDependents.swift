import CoreDataStore
import Foundation

/// How far the re-indexing of one related object's dependents went, when they were too many to re-index in
/// the history batch that changed it (a renamed country's places): the stage that lets the saves after a
/// big rename be findable without waiting for it.
///
/// A catch-up writes such dependents a page at a time, between history batches, each page in a transaction
/// of its own with this progress; the token moves on meanwhile. Pages are read in snapshots whose history is
/// all written, so every page shows the object as its newest digest describes it. The object changed again
/// midway (a new digest) re-indexes every dependent from where the walk is, around the list once
/// (`restarted(at:)`): the pages before the change showed the old values. Dependents that join the object
/// later are re-indexed by their own change, and those deleted are skipped, so the list found when the walk
/// (re)starts, or resumes in a new run, is the one it walks.
///
/// Saved in the index as JSON (`text`), which the index keeps without reading; a progress that does not
/// decode (a damaged index) walks every dependent again. Public for what watches a follower: a save that
/// changed a related object is findable, all of it, once the token covers it and no walk of that object
/// began at or before it (``origin``).
public struct DeferredDependents: Sendable, Equatable, Codable {
    /// A dependent's place in the walk: the order history batches sort objects in, entity then primary key.
    struct Key: Sendable, Equatable, Comparable, Codable {
        var entity: String
        var primaryKey: Int64

        init(_ id: ManagedObjectID) {
            entity = id.entityName
            primaryKey = id.primaryKey
        }

        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.entity, lhs.primaryKey) < (rhs.entity, rhs.primaryKey) }
    }

    /// A transaction no later than the oldest change to the object some dependent may not show yet (the
    /// first of the batch that began the walk): a save at or after it that changed the object is findable,
    /// all of it, once this progress is gone.
    public internal(set) var origin: Int64
    /// The last dependent re-indexed; nil before the first.
    var after: Key?
    /// Where a walk restarted midway ends: after the list's end it goes on from its start through this key.
    var stop: Key?
    /// Whether the walk went past the list's end and is on its way to ``stop``.
    var wrapped = false

    /// A walk of every dependent, from the start.
    init(origin: Int64) {
        self.origin = origin
    }

    /// The progress saved in the index (`SearchIndex.deferredDependents(storeUUID:)`); nil when
    /// it does not read as one.
    public init?(text: String) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)) else { return nil }
        self = decoded
    }

    /// The progress as the index keeps it.
    var text: String {
        // Encoding four plain fields cannot fail; an empty text would only walk every dependent again.
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// The walk after the object changed again: every dependent once more, from where it is.
    func restarted(at transaction: Int64) -> DeferredDependents {
        var walk = DeferredDependents(origin: min(origin, transaction))
        walk.after = after
        walk.stop = after
        return walk
    }

    /// The next `size` dependents of `dependents` (sorted by ``Key``) to re-index, and the progress after
    /// them: nil when they are the last.
    func page(of dependents: [ManagedObjectID], size: Int) -> (ids: [ManagedObjectID], next: DeferredDependents?) {
        var walk = self
        var ids: [ManagedObjectID] = []
        while true {
            // The range being walked: after `after`, through `stop` once wrapped, else to the end.
            let start = walk.after.map { key in Self.firstIndex(in: dependents) { Key($0) > key } } ?? 0
            let end = walk.wrapped ? walk.stop.map { key in Self.firstIndex(in: dependents) { Key($0) > key } } ?? dependents.count : dependents.count
            let taken = dependents[start..<max(start, min(end, start + size - ids.count))]
            ids += taken
            if let last = taken.last { walk.after = Key(last) }
            if start + taken.count < end { return (ids, walk) }
            // The range is done: a restarted walk goes on from the list's start, any other is finished.
            guard walk.stop != nil, !walk.wrapped else { return (ids, nil) }
            walk.wrapped = true
            walk.after = nil
            if ids.count == size { return (ids, walk) }
        }
    }

    /// The first index of sorted `ids` whose element satisfies `isAfter` (false for a prefix, true after).
    private static func firstIndex(in ids: [ManagedObjectID], where isAfter: (ManagedObjectID) -> Bool) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(ids[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
