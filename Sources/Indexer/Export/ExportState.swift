import SearchIndex

/// Where an unfinished first export or rebuild stands, as its checkpoint keeps it (the index stores it
/// as opaque text): enough to resume after the last committed page and to tell readers how far it is.
///
/// The text is `t0 root after`, then ` sweep` during a rebuild, then ` read/count`: T0 (the history
/// token the export started from), the position of the root entity being paged and the last primary key
/// committed of it, and the objects committed so far of those the store held when the export began.
/// States written before the counts existed still parse (without them).
struct ExportState: Sendable, Hashable {
    /// The history token read before the first page: later saves are replayed from history.
    var t0: Int64
    /// The position, in the exporter's root order, of the root entity to page next.
    var rootIndex: Int
    /// The last primary key committed of that root (0: none yet).
    var after: Int64
    /// Whether this export rewrites an existing index, whose unrewritten items are swept at the end.
    var sweep: Bool
    /// Objects committed so far, over every run of this export.
    var objectsExported: Int64 = 0
    /// Objects the export reads in all (the store's count when it began); nil in states written before
    /// counts were kept.
    var objectCount: Int64?

    /// Reads a checkpoint's export state; nil for no state, the removal marker or text that is not one.
    init?(_ text: String?) {
        guard let parts = text?.split(separator: " ", omittingEmptySubsequences: false), (3...5).contains(parts.count),
              let t0 = Int64(parts[0]), let rootIndex = Int(parts[1]), let after = Int64(parts[2]),
              // A damaged index must not steer the exporter to a negative root position (a trap) or token.
              t0 >= 0, rootIndex >= 0, after >= 0 else { return nil }
        var rest = parts.dropFirst(3)
        let sweep = rest.first == "sweep"
        if sweep { rest = rest.dropFirst() }
        if let counts = rest.first {
            let pair = counts.split(separator: "/", omittingEmptySubsequences: false)
            guard rest.count == 1, pair.count == 2, let read = Int64(pair[0]), let count = Int64(pair[1]), read >= 0, count >= 0 else { return nil }
            (objectsExported, objectCount) = (read, count)
        } else if !rest.isEmpty {
            return nil
        }
        (self.t0, self.rootIndex, self.after, self.sweep) = (t0, rootIndex, after, sweep)
    }

    /// Creates the state of an export about to start, or after a page.
    init(t0: Int64, rootIndex: Int, after: Int64, sweep: Bool, objectsExported: Int64 = 0, objectCount: Int64? = nil) {
        (self.t0, self.rootIndex, self.after, self.sweep) = (t0, rootIndex, after, sweep)
        (self.objectsExported, self.objectCount) = (objectsExported, objectCount)
    }

    /// The text the checkpoint keeps.
    var text: String {
        var text = "\(t0) \(rootIndex) \(after)"
        if sweep { text += " sweep" }
        if let objectCount { text += " \(objectsExported)/\(objectCount)" }
        return text
    }
}

/// An unfinished export or removal of one store, as status reports and searches tell it.
public struct ExportStatus: Sendable, Hashable {
    /// What is unfinished.
    public enum Kind: String, Sendable, Hashable {
        /// The store's first export: the index holds only part of its objects.
        case firstExport
        /// A rebuild: every object is being written again over the previous items, which stay searchable.
        case rebuild
        /// An interrupted rebuild that had begun by removing the old items: part of them are gone.
        case removal
    }

    /// What is unfinished.
    public var kind: Kind
    /// Objects written so far; nil when the state does not say.
    public var objectsExported: Int?
    /// Objects the export writes in all (the store's count when it began); nil when the state does not say.
    public var objectCount: Int?

    /// Whether searches may miss objects the store holds: true unless the previous items are all still there.
    public var resultsIncomplete: Bool { kind != .rebuild }

    /// The status an index checkpoint's export state describes; nil when no export is unfinished.
    public init?(checkpoint: StoreCheckpoint) {
        guard let text = checkpoint.exportState else { return nil }
        if text == StoreCheckpoint.removalInProgress {
            kind = .removal
        } else if let state = ExportState(text) {
            kind = state.sweep ? .rebuild : .firstExport
            if let count = state.objectCount { (objectsExported, objectCount) = (Int(min(state.objectsExported, count)), Int(count)) }
        } else {
            kind = .firstExport
        }
    }
}
