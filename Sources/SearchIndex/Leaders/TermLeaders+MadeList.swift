import Foundation

extension TermLeaders {
    /// A key's lists made and not yet written: what listing it reads and scores, apart from the writes, so
    /// that a reader's connection can make lists beside the writer (``refresh(_:sharingWith:minimumDocuments:registeringDocuments:depths:)``).
    struct MadeList: Sendable {
        /// One row of the leader list: an item and the key's instances in it.
        struct Leader: Sendable {
            let id: Int64
            let instances: Data
        }

        /// A placed list's tail, encoded (``TermLeaders/PlacedTail``).
        struct Tail: Sendable {
            let count: Int
            let entries: Data
        }

        let key: String
        /// The rows holding the key (its document frequency).
        let documents: Int
        /// FTS5's rows and the display name's and title's average lengths when listed.
        let rows: Int64
        let averages: (name: Double, title: Double)
        /// The best score of a row left off and its URI; nil when every row is listed.
        let threshold: Double?, boundary: String?
        let leaders: [Leader]
        /// The best score of a placed row left off; nil when every placed row is listed.
        let placedThreshold: Double?
        /// The placed rows in ``PlacedEntry`` records, in chunks of ``placedChunkEntries``.
        let placedChunks: [Data]
        let tail: Tail?
    }
}
