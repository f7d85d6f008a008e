import CoreDataStore
import Foundation
import SearchIndex

/// One page of a first export: its items, how many objects were read for it, and where to resume after
/// it (nil after the last page, unless a sweep is still to come).
struct ExportPage: Sendable {
    /// Prepared on the producer's thread: the committing thread, the export's bottleneck, only writes them.
    var items: [PreparedItem]
    /// Values left out of the items (not finite numbers).
    var omittedValues: Int
    var objectCount: Int
    var entity: String
    var state: ExportState?
    /// Digests of what items show of the page's objects (``ShownValueDigests``), when they are exact.
    var shownValues: [String: String] = [:]
    /// Set on the last page when something was saved since T0: the digests saved with earlier pages may not
    /// describe what later pages read, and are forgotten with it.
    var forgetsShownValues = false
}

/// Reads, evaluates and prepares export pages (texts joined and tokenized): the export's producing stage, a
/// child task on a thread of its own.
struct PageProducer: Sendable {
    let store: PersistentStore
    let builder: ItemBuilder
    let digests: ShownValueDigests
    let roots: [String]
    let batchSize: Int
    let t0: Int64
    /// Whether this export rebuilds over existing items: its states say a sweep is pending, even after
    /// the last page.
    var sweeping = false

    /// The relationships a page of `root`'s hierarchy is read with: what its items evaluate, and what the
    /// digests of its objects need (without them, the digests would read the page again).
    func relationships(forHierarchy root: String) -> RelationshipSelection {
        let shown = builder.configuration.model.hierarchy(from: root).reduce(into: Set<String>()) { $0.formUnion(digests.toManyFirstSteps(of: $1)) }
        switch builder.selection(forHierarchy: root) {
        case .toOneAnd(let evaluated): return .toOneAnd(evaluated.union(shown))
        case let other: return other
        }
    }

    func run(from firstRoot: Int, after firstKey: Int64, into pages: PageQueue<ExportPage>) {
        var rootIndex = firstRoot, after = firstKey
        // Per root, once: what its pages are read with.
        let selections = roots.map(relationships(forHierarchy:))
        do {
            while rootIndex < roots.count {
                let root = roots[rootIndex]
                let (built, count, last, shown, exact) = try store.read { snapshot throws in
                    let page = try snapshot.objects(ofEntity: root, afterPrimaryKey: after, limit: batchSize, relationships: selections[rootIndex])
                    // A digest is exact only while nothing was saved since T0: then every page read so far saw
                    // this state. Whether every later page saw it too, the last page tells: if anything was
                    // saved by then, the export's digests are forgotten, and objects get theirs at their first
                    // change, from history.
                    let exact = try store.hasHistory && snapshot.historyBounds().newest == t0
                    let shown = exact ? try digests.digests(of: page, in: snapshot).reduce(into: [:]) { $0[$1.key.uriRepresentation] = $1.value } : [:]
                    return (try builder.items(for: page, in: snapshot), page.count, page.last?.objectID.primaryKey, shown, exact)
                }
                if let last { after = last } else { rootIndex += 1; after = 0 }
                let state = sweeping || rootIndex < roots.count ? ExportState(t0: t0, rootIndex: rootIndex, after: after, sweep: sweeping) : nil
                guard pages.put(ExportPage(items: built.items.map(PreparedItem.init), omittedValues: built.omittedValues, objectCount: count,
                                           entity: root, state: state, shownValues: shown,
                                           forgetsShownValues: rootIndex >= roots.count && !exact)) else { return }
            }
            pages.finish(nil)
        } catch {
            pages.finish(error)
        }
    }
}
