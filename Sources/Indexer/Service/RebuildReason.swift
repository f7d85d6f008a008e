import Foundation

/// Why a catch-up wrote a store's items again from scratch instead of following its history.
///
/// Each case is a fact an app can branch on; ``description`` says it in words.
public enum RebuildReason: Sendable, Equatable, CustomStringConvertible {
    /// The caller asked for it (``Exporter/catchUp(rebuild:events:)`` with `rebuild: true`).
    case requested
    /// Another store (a new UUID) now sits at the store's path; the old store's items were removed.
    case storeReplaced(previousUUID: String)
    /// An earlier rebuild was interrupted after removing only part of the old items.
    case interruptedRemoval
    /// The store's model changed since the index was built (a migration).
    case modelChanged
    /// The configuration changed what items contain.
    case configurationChanged
    /// The store's history ends before the index's token: the store was restored from a backup, or its
    /// history was reset.
    case historyEndsBeforeToken(newest: Int64, token: Int64)
    /// The transaction under the index's token was saved at another time than the index recorded: the store
    /// was restored from a backup and saved since.
    case historyRewritten(token: Int64, recorded: Date, found: Date)
    /// History was purged past the index's token (the token expired).
    case historyPurged(token: Int64)
    /// The store tracks no persistent history, so every catch-up exports everything.
    case noHistory
    /// Catching up on the backlog would take longer than writing the store again.
    case backlog(RebuildPolicy.Estimate)

    public var description: String {
        switch self {
        case .requested: "a rebuild was requested"
        case .storeReplaced(let previous): "the store was replaced (it was \(previous))"
        case .interruptedRemoval: "an interrupted rebuild had removed only part of the old items"
        case .modelChanged: "the store's model changed (migration)"
        case .configurationChanged: "the configuration changed what items contain"
        case .historyEndsBeforeToken(let newest, let token):
            "the store's history ends at transaction \(newest), before the index's token \(token): "
                + "the store was restored from a backup or its history was reset"
        case .historyRewritten(let token, let recorded, let found):
            "transaction \(token) of the store was saved at \(found), not at \(recorded) as the index recorded: "
                + "the store was restored from a backup and saved since"
        case .historyPurged(let token): "history was purged past token \(token) (history token expired)"
        case .noHistory:
            "the store has no persistent history: re-exporting everything; turn on NSPersistentHistoryTrackingKey in the app's "
                + "store description to index only what changed"
        case .backlog(let estimate):
            "catching up would take about \(Self.seconds(estimate.catchUpSeconds)) more "
                + "(\(estimate.changesDone) of \(estimate.changesDone + estimate.changesLeft) changes in \(Self.seconds(estimate.elapsed))); "
                + "re-exporting the store's \(estimate.objectCount) objects takes about \(Self.seconds(estimate.rebuildSeconds))"
        }
    }

    /// Seconds for a sentence: "2.4 s".
    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }
}
