import Foundation
import SearchIndex

/// Where an unfinished first export or rebuild stands, as its checkpoint keeps it (the index stores it as
/// opaque text): enough to resume after the last committed page and to tell readers how far it is.
///
/// Kept as versioned JSON (``version``): `{"after":30,"count":34258,"exported":1000,"root":1,"sweep":false,"t0":7,
/// "version":1}`. States an earlier Searchlight wrote as text (`t0 root after[ sweep][ read/count]`) are still
/// read, so an export interrupted before an upgrade resumes after it.
struct ExportState: Sendable, Hashable, Codable {
    /// The format this Searchlight writes; a state of a newer one is not read (the export starts again).
    static let currentVersion = 1

    /// The format of this state.
    var version = ExportState.currentVersion
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

    private enum CodingKeys: String, CodingKey {
        case version, t0, rootIndex = "root", after, sweep, objectsExported = "exported", objectCount = "count"
    }

    /// Reads a checkpoint's export state; nil for no state, the removal marker, a state of a newer format
    /// or text that is not one.
    init?(_ text: String?) {
        guard let text else { return nil }
        guard let state = text.hasPrefix("{") ? Self.decoded(text) : Self.legacy(text),
              // A damaged index must not steer the exporter to a negative root position (a trap) or token.
              state.version == Self.currentVersion, state.t0 >= 0, state.rootIndex >= 0, state.after >= 0,
              state.objectsExported >= 0, (state.objectCount ?? 0) >= 0 else { return nil }
        self = state
    }

    /// Creates the state of an export about to start, or after a page.
    init(t0: Int64, rootIndex: Int, after: Int64, sweep: Bool, objectsExported: Int64 = 0, objectCount: Int64? = nil) {
        (self.t0, self.rootIndex, self.after, self.sweep) = (t0, rootIndex, after, sweep)
        (self.objectsExported, self.objectCount) = (objectsExported, objectCount)
    }

    /// The text the checkpoint keeps: the state as JSON, keys sorted.
    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Integers and a Boolean always encode: the empty text is unreachable.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    private static func decoded(_ text: String) -> ExportState? {
        try? JSONDecoder().decode(ExportState.self, from: Data(text.utf8))
    }

    /// A state in the text form written before states were JSON: `t0 root after`, then ` sweep`, then
    /// ` read/count`.
    private static func legacy(_ text: String) -> ExportState? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard (3...5).contains(parts.count), let t0 = Int64(parts[0]), let rootIndex = Int(parts[1]), let after = Int64(parts[2]) else { return nil }
        var state = ExportState(t0: t0, rootIndex: rootIndex, after: after, sweep: false)
        var rest = parts.dropFirst(3)
        if rest.first == "sweep" {
            state.sweep = true
            rest = rest.dropFirst()
        }
        if let counts = rest.first {
            let pair = counts.split(separator: "/", omittingEmptySubsequences: false)
            guard rest.count == 1, pair.count == 2, let read = Int64(pair[0]), let count = Int64(pair[1]) else { return nil }
            (state.objectsExported, state.objectCount) = (read, count)
        }
        return state
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
        if checkpoint.isRemovingItems {
            kind = .removal
        } else if let state = ExportState(text) {
            kind = state.sweep ? .rebuild : .firstExport
            if let count = state.objectCount { (objectsExported, objectCount) = (Int(min(state.objectsExported, count)), Int(count)) }
        } else {
            kind = .firstExport
        }
    }
}
