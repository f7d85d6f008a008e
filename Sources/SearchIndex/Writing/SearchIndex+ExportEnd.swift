import GRDB

extension SearchIndex {
    /// Ends a first export or a rebuild whose items are committed: commits `checkpoint` (the export's end)
    /// with what is made from every item at once, in one transaction: the typo dictionary refilled from the
    /// vocabulary, the leader lists listed anew (``TermLeaders``), the facet columns stored
    /// (``FacetColumn/store(_:db:stops:)``).
    ///
    /// A transaction of its own, after the items': a reader's connection then sees them, and makes half the
    /// lists beside the writer (``TermLeaders/refresh(_:sharingWith:minimumDocuments:registeringDocuments:depths:)``).
    /// Until it commits, the index's checkpoint still says the export runs: a crash between the two resumes it,
    /// and the resumed export ends here again. With `clearingRebuildMarks`, a rebuild's marks go in the same
    /// transaction (before it, a crash would leave a rebuild to sweep with no marks: every item).
    func finishExport(_ checkpoint: StoreCheckpoint, clearingRebuildMarks: Bool) throws(SearchIndexError) {
        try write { db in
            if clearingRebuildMarks {
                try db.execute(sql: "DELETE FROM rebuild_marks WHERE store_id = (SELECT id FROM stores WHERE uuid = ?)", arguments: [checkpoint.storeUUID])
            }
            _ = try Self.saveCheckpoint(checkpoint, db: db)
            // A pool's reader sees what this transaction's first write found committed: it holds the write lock
            // from there on. A single connection lists alone.
            if let pool = database as? DatabasePool {
                try TermLeaders.refresh(db, sharingWith: pool)
            } else {
                try TermLeaders.refresh(db, listingPrefixes: false, refillingDictionary: true)
            }
            // The export's pages dropped the stored facet columns: every attribute's is stored anew.
            try FacetColumn.store(nil, db: db)
        }
    }
}
