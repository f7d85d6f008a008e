import CoreDataStore

/// A history batch's changes, one fact per object: the stage between reading history and expanding
/// dependents (read history → **coalesce** → expand dependents → fetch → evaluate → commit).
///
/// A pure function of the transactions: an object deleted anywhere in the batch is deleted (Core Data never
/// gives a primary key to a second object, so nothing saved after a delete can be the same object again);
/// any other object the batch touched is changed, and is built again from the store as it is now, whatever
/// the order of its inserts and updates.
struct CoalescedChanges: Sendable, Equatable {
    /// Objects inserted or updated, and not deleted, in the batch.
    var changed: Set<ManagedObjectID> = []
    /// Objects deleted in the batch.
    var deleted: Set<ManagedObjectID> = []
    /// How many history changes the batch held.
    var changeCount = 0

    /// Coalesces the changes of `transactions`.
    init(_ transactions: [HistoryTransaction]) {
        for change in transactions.lazy.flatMap(\.changes) {
            changeCount += 1
            if change.type == .delete { deleted.insert(change.objectID) } else { changed.insert(change.objectID) }
        }
        changed.subtract(deleted)
    }
}
