import CoreDataStore
import Foundation
import SearchIndex

/// One page of a catch-up: items to write and URIs to remove. The pages of one history batch are written
/// in one index transaction; the last carries what ends it.
struct HistoryPage: Sendable {
    /// Prepared on the producer's thread, like an export page's.
    var items: [PreparedItem]
    var deletes: [String]
    var omittedValues: Int
    /// Set on a history batch's last page.
    var end: HistoryBatchEnd?
}

/// What a history batch commits with its last page, besides items; a page of deferred dependents
/// (``DeferredDependents``) is a batch of its own, which leaves the token where it is.
struct HistoryBatchEnd: Sendable {
    /// The batch's newest transaction, and that transaction's timestamp.
    struct Reached: Sendable {
        var token: Int64
        var timestamp: Date
    }

    /// The token the batch brings the index to; nil for a page of deferred dependents.
    var reached: Reached?
    /// Digests of what related objects show (``ShownValueDigests``), new ones and forgotten ones.
    var shownValues: [String: String] = [:]
    var forgottenShownValues: [String] = []
    /// The history changes the batch covered.
    var changes = 0
    /// The progress of deferred dependents, new or moved on, and those finished.
    var deferredDependents: [String: String] = [:]
    var finishedDeferredDependents: [String] = []
}

/// Reads history after a token and turns each batch of it into pages of prepared items, as a child task on a
/// thread of its own, while the committing stage writes the pages before them.
///
/// The stages, in order: read history (``StoreSnapshot/transactions(after:limit:changeLimit:)``), coalesce
/// (``CoalescedChanges``, a pure function), expand dependents (``DependentExpansion``, skipping related objects
/// whose ``ShownValueDigests`` did not change), fetch and evaluate (``page(_:changed:in:)``, with
/// ``ItemBuilder``), and commit (the exporter, one index transaction per batch). A cancelled page queue stops
/// the producer between pages; the task group it runs in awaits it before the catch-up returns.
///
/// A batch is coalesced per object (anything followed by a delete is a delete, the rest is an upsert of the
/// current row), then expanded to the indexed objects that show a changed one through a relationship (a
/// renamed country's places); the expanded set is fetched, evaluated and tokenized in pages of ``pageSize``
/// objects, as a first export is, so a rename that touches thirty thousand items runs at export speed
/// instead of building them all on the committing thread.
///
/// A changed object with more dependents than a page, or with a walk under way, has them deferred
/// (``DeferredDependents``): the batch commits its changed objects and the walk's (re)start, and the walk
/// goes on a page at a time between the batches after it, so a save behind a big rename waits for a page of
/// it, not all of it. The catch-up ends when history is written and no walk is left: an object changed
/// again faster than its walk goes round keeps it going.
struct HistoryProducer: Sendable {
    let store: PersistentStore
    /// Read for the digests saved with earlier batches.
    let index: any IndexWriter
    let builder: ItemBuilder
    let digests: ShownValueDigests
    let batchSize: Int
    /// Whether dependents beyond a page are walked beside later batches (``DeferredDependents``); walks
    /// saved before are finished either way.
    var defersDependents = true
    /// How long walks go on once history is written before the run ends with walks left
    /// (``Exporter/walkSlice``); nil: until none is left.
    var walkSlice: TimeInterval?

    var configuration: ResolvedConfiguration { builder.configuration }

    /// Objects per page: the writer's choice (``IndexWriter/catchUpPageSize``). The writer starts on a batch
    /// once its first page is built, and the batch commits once its last page is written, so a batch waits
    /// about a page on each side; a page's own costs (an index read for the old texts, a store query per
    /// entity, a writer's statements) are what larger pages save.
    var pageSize: Int { max(1, min(batchSize, index.catchUpPageSize)) }

    /// What one history batch asks for: objects to rebuild, URIs to remove, the transaction it ends at.
    struct Batch {
        /// Changed objects and their dependents, in a fixed order (entity, then primary key).
        var affected: [ManagedObjectID]
        /// Objects the batch changed (not only dependents): those gone from the store by now are removed.
        var changed: Set<ManagedObjectID>
        var deletes: [String]
        var end: HistoryBatchEnd
    }

    /// A related object's deferred dependents as the producer walks them: the progress, and the dependents
    /// found when the walk (re)started, or in the run's first page of it.
    struct DeferredWalk {
        var progress: DeferredDependents
        var dependents: [ManagedObjectID]?
    }

    /// Produces the pages of history after `token`, and of the walks `deferred` saved in the index (by the
    /// related object's URI), until history is written and no walk is left.
    func run(after token: Int64, deferred: [String: String], into pages: PageQueue<HistoryPage>) {
        var token = token
        // The digests this producer has handed out: newer than the index's until the writer commits them.
        var known: [String: String] = [:]
        // A progress that does not read (a damaged index) walks every dependent again, its origin unknown.
        var walks = deferred.mapValues { DeferredWalk(progress: DeferredDependents(text: $0) ?? DeferredDependents(origin: 0)) }
        // When walking began with history written; a history batch starts the slice again.
        var walkingSince: UInt64?
        do {
            // One store snapshot per history batch: its digests describe exactly what its pages show. (Read
            // later, a page could show a name changed and changed back since the digest, which the next
            // batch's equal digest would then leave in place.) Pages are handed over inside the read, so the
            // writer starts on a big batch while the rest is built: the read then lasts about as long as the
            // batch's writes (0.3 s for a 3,779-place rename), holding back only WAL checkpoints past it, not
            // the app's saves. Building the batch first and handing it over after the read cost a fifth of
            // the rename rate and 20–50% of the storm's p99 (searchbench storm, 20 s runs).
            while try store.read({ snapshot throws -> Bool in
                var worked = false
                if let batch = try self.batch(after: token, known: known, walks: &walks, in: snapshot) {
                    walkingSince = nil
                    known.merge(batch.end.shownValues) { _, new in new }
                    for uri in batch.end.forgottenShownValues { known[uri] = nil }
                    // At least one page, which carries the batch's deletes first and its end last (a batch of
                    // deletes only is one empty page).
                    let starts = Array(stride(from: 0, to: max(1, batch.affected.count), by: pageSize))
                    for (number, start) in starts.enumerated() {
                        var page = try self.page(batch.affected[start..<min(start + pageSize, batch.affected.count)], changed: batch.changed, in: snapshot)
                        if number == 0 { page.deletes = batch.deletes + page.deletes }
                        if number == starts.count - 1 { page.end = batch.end }
                        guard pages.put(page) else { return false }
                    }
                    token = batch.end.reached?.token ?? token
                    worked = true
                }
                // A page of a walk only in a snapshot whose history is all in the pages before it: the page
                // then shows each related object as the digest saved last describes it.
                if !walks.isEmpty, try !snapshot.hasTransactions(after: token) {
                    // The slice used up with history written (a page at least walked): the walks wait for the
                    // next catch-up.
                    if let walkSlice, let since = walkingSince, !worked,
                       Double(DispatchTime.now().uptimeNanoseconds - since) / 1e9 >= walkSlice { return false }
                    if walkingSince == nil { walkingSince = DispatchTime.now().uptimeNanoseconds }
                    if let page = try self.deferredPage(&walks, in: snapshot) {
                        guard pages.put(page) else { return false }
                        worked = true
                    }
                }
                return worked
            }) {}
            pages.finish(nil)
        } catch {
            pages.finish(error)
        }
    }

    /// The next history batch after `token`, coalesced and expanded; nil when history holds nothing newer.
    /// Walks of deferred dependents start, or start again, in `walks`.
    func batch(after token: Int64, known: [String: String], walks: inout [String: DeferredWalk], in snapshot: StoreSnapshot) throws -> Batch? {
        let transactions = try snapshot.transactions(after: token, limit: 100, changeLimit: batchSize)
        guard let first = transactions.first, let last = transactions.last else { return nil }
        let coalesced = CoalescedChanges(transactions)
        let (changed, deleted) = (coalesced.changed, coalesced.deleted)
        // Changed objects that indexed items show, read for their digests; only those whose dependents show
        // something new are read again with their dependents, and expanded.
        let shownObjects = try digests.objects(changed, in: snapshot)
        let shown = try shownValues(of: shownObjects, known: known, in: snapshot)
        let expanded = try digests.withFirstInverses(shownObjects.filter { !shown.unchanged.contains($0.objectID) }, in: snapshot)
        let expansion = DependentExpansion(configuration: configuration, digests: digests)
        var dependents: Set<ManagedObjectID> = []
        var end = HistoryBatchEnd(reached: .init(token: last.number, timestamp: last.timestamp), shownValues: shown.digests, changes: coalesced.changeCount)
        for object in expanded {
            let uri = object.objectID.uriRepresentation
            let found = try indexedDependents(of: [object], expansion: expansion, in: snapshot)
            // Dependents walked already are walked again, all of them; more than a page are walked beside
            // the batches after this one; the rest are in this batch. The walk's origin is the batch's first
            // transaction: no later than the save that changed the object.
            let progress: DeferredDependents
            if let walk = walks[uri] {
                progress = walk.progress.restarted(at: first.number)
            } else if defersDependents && found.count > pageSize {
                progress = DeferredDependents(origin: first.number)
            } else {
                dependents.formUnion(found)
                continue
            }
            walks[uri] = DeferredWalk(progress: progress, dependents: Self.sorted(found))
            end.deferredDependents[uri] = progress.text
        }
        let affected = Self.sorted(changed.filter { configuration.plans[$0.entityName] != nil }.union(dependents))
        let deletes = deleted.filter { configuration.plans[$0.entityName] != nil }.map(\.uriRepresentation).sorted()
        // A deleted object's digest goes with it, whether it was an item or not, and so does its walk.
        end.forgottenShownValues = deleted.filter { digests.isShown($0.entityName) }.map(\.uriRepresentation).sorted()
        for uri in end.forgottenShownValues { walks[uri] = nil }
        return Batch(affected: affected, changed: changed, deletes: deletes, end: end)
    }

    /// The next page of the walk with the oldest origin, in its own batch with the walk's new progress; nil
    /// when no walk is left.
    func deferredPage(_ walks: inout [String: DeferredWalk], in snapshot: StoreSnapshot) throws -> HistoryPage? {
        guard let (uri, walk) = walks.min(by: { ($0.value.progress.origin, $0.key) < ($1.value.progress.origin, $1.key) }) else { return nil }
        let dependents = try walk.dependents ?? Self.sorted(dependents(ofURI: uri, in: snapshot))
        let (ids, next) = walk.progress.page(of: dependents, size: pageSize)
        var page = try self.page(ids[...], changed: [], in: snapshot)
        var end = HistoryBatchEnd()
        if let next {
            walks[uri] = DeferredWalk(progress: next, dependents: dependents)
            end.deferredDependents[uri] = next.text
        } else {
            walks[uri] = nil
            end.finishedDeferredDependents = [uri]
        }
        page.end = end
        return page
    }

    /// The indexed dependents of the related object at `uri` (a walk resumed in a new run); none when it is
    /// gone, or the URI names nothing (a damaged index).
    func dependents(ofURI uri: String, in snapshot: StoreSnapshot) throws -> Set<ManagedObjectID> {
        guard let id = try? ManagedObjectID(uriRepresentation: uri) else { return [] }
        let objects = try digests.withFirstInverses(try digests.objects([id], in: snapshot), in: snapshot)
        return try indexedDependents(of: objects, expansion: DependentExpansion(configuration: configuration, digests: digests), in: snapshot)
    }

    /// The dependents of `objects` (read with their first inverses) that are items.
    func indexedDependents(of objects: [ManagedObjectSnapshot], expansion: DependentExpansion, in snapshot: StoreSnapshot) throws -> Set<ManagedObjectID> {
        try expansion.dependents(of: objects, in: snapshot).filter { configuration.plans[$0.entityName] != nil }
    }

    /// Objects in the order batches and walks take them: entity, then primary key.
    static func sorted(_ ids: some Sequence<ManagedObjectID>) -> [ManagedObjectID] {
        ids.sorted { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) }
    }

    /// Items for one page of a batch's objects, read as the store is now; objects the batch changed that are
    /// gone by now (deleted by a later transaction) are removed.
    func page(_ ids: ArraySlice<ManagedObjectID>, changed: Set<ManagedObjectID>, in snapshot: StoreSnapshot) throws -> HistoryPage {
        var objects: [ManagedObjectSnapshot] = []
        for (entity, group) in Dictionary(grouping: ids, by: \.entityName).sorted(by: { $0.key < $1.key }) {
            let found = try snapshot.objects(group, relationships: builder.selection(for: entity))
            objects += group.compactMap { found[$0] }
        }
        let found = Set(objects.map(\.objectID))
        let gone = ids.filter { changed.contains($0) && !found.contains($0) }.map(\.uriRepresentation)
        let built = try builder.items(for: objects, in: snapshot)
        // History mostly changes items the index holds: their old texts are tokenized here too.
        var items = built.items.map(PreparedItem.init)
        try index.prepareReplacements(of: &items)
        return HistoryPage(items: items, deletes: gone + built.skipped, omittedValues: built.omittedValues)
    }

    /// Changed related objects whose dependents need not be re-indexed (``ShownValueDigests``), and the
    /// digests to save with the batch.
    struct ShownValues {
        var unchanged: Set<ManagedObjectID> = []
        var digests: [String: String] = [:]
    }

    /// Compares the digests of changed `objects` with the newest known ones: `known` first (this producer's
    /// own, perhaps not committed yet), then the index's.
    func shownValues(of objects: [ManagedObjectSnapshot], known: [String: String], in snapshot: StoreSnapshot) throws -> ShownValues {
        var result = ShownValues()
        let computed = try digests.digests(of: objects, in: snapshot)
        guard !computed.isEmpty else { return result }
        let saved = try index.shownValues(for: computed.keys.map(\.uriRepresentation).filter { known[$0] == nil })
        for (id, digest) in computed {
            let uri = id.uriRepresentation
            if (known[uri] ?? saved[uri]) == digest { result.unchanged.insert(id) } else { result.digests[uri] = digest }
        }
        return result
    }
}
