import Foundation
import GRDB
import CSearchTokenizer
import GRDBSQLite

/// Removing a store's items, rebuilding over them, and the digests of what related objects show.
extension SearchIndex {
    /// Removes every item of a store and its checkpoint (before a rebuild).
    ///
    /// Memory and transaction size stay bounded whatever the store's size: when the store is the index's
    /// only one, everything is cleared in one transaction; otherwise its items go in transactions of
    /// `batchSize`. The first of those marks the checkpoint ``StoreCheckpoint/removalInProgress``, so an
    /// interrupted removal is never mistaken for an index that is up to date; calling again finishes it.
    @discardableResult
    public func removeStore(uuid: String, batchSize: Int = 10_000) throws(SearchIndexError) -> Int {
        let cleared: Int? = try write { db in
            guard let storeID = try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [uuid]) else { return 0 }
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stores WHERE id <> ?", arguments: [storeID]) == 0 else {
                try db.execute(sql: "UPDATE stores SET export_state = ? WHERE id = ?", arguments: [StoreCheckpoint.removalInProgress, storeID])
                return nil
            }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items") ?? 0
            // The only store: no per-row work (FTS5's delete-all drops its segments at once).
            try db.execute(sql: """
                INSERT INTO items_fts (items_fts) VALUES ('delete-all');
                DELETE FROM items; DELETE FROM item_texts; DELETE FROM items_geo; DELETE FROM rebuild_marks; DELETE FROM item_attributes;
                DELETE FROM item_terms; DELETE FROM term_windows; DELETE FROM shown_values; DELETE FROM deferred_dependents;
                DELETE FROM facet_columns; DELETE FROM facet_column_changes;
                DELETE FROM stores WHERE id = \(storeID);
                """)
            try TermLeaders.forgetAll(db)
            return count
        }
        if let cleared { return cleared }
        var removed = 0
        var after: Int64 = 0
        while true {
            let done: Bool = try write { db in
                guard let storeID = try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [uuid]) else { return true }
                // By row id from where the last batch stopped: one pass over the table in all.
                // The rows carry what the FTS5 delete needs: no second lookup per item.
                let rows = try Row.fetchAll(db, sql: """
                    SELECT i.id, i.display_name, t.title, t.text, t.keywords FROM items i JOIN item_texts t ON t.id = i.id
                    WHERE i.id > ? AND i.store_id = ? ORDER BY i.id LIMIT ?
                    """, arguments: [after, storeID, batchSize])
                let removals = try RemovalStatements(db)
                // Deletes collect no terms (RemovalStatements.removeText); the table is brought back to the
                // vocabulary at the end.
                for row in rows { try removals.delete(row, db: db) }
                removed += rows.count
                guard let last = rows.last else {
                    try db.execute(sql: "DELETE FROM rebuild_marks WHERE store_id = ?", arguments: [storeID])
                    try db.execute(sql: "DELETE FROM shown_values WHERE store_id = ?", arguments: [storeID])
                    try db.execute(sql: "DELETE FROM deferred_dependents WHERE store_id = ?", arguments: [storeID])
                    try db.execute(sql: "DELETE FROM stores WHERE id = ?", arguments: [storeID])
                    if removed > 0 { try TermDictionary.refresh(db) }
                    return true
                }
                after = try last.integer(0)
                return false
            }
            if done { return removed }
        }
    }

    /// Starts a rebuild that keeps the store's items searchable: forgets the marks of an earlier rebuild
    /// that never finished. Batches with ``IndexBatch/marksRebuild`` then mark what they write again.
    /// The digests of what related objects show are forgotten too: a rebuild re-indexes every item with
    /// what its related objects show now, which an older digest may not describe. Walks of deferred dependents
    /// are kept: a rebuild interrupted before its first page is not resumed, and the walks would be lost; the
    /// export's last batch ends them (``IndexBatch/finishedDeferredDependents``).
    public func beginRebuild(storeUUID: String) throws(SearchIndexError) {
        try write { db in
            try db.execute(sql: "DELETE FROM rebuild_marks WHERE store_id = (SELECT id FROM stores WHERE uuid = ?)", arguments: [storeUUID])
            try db.execute(sql: "DELETE FROM shown_values WHERE store_id = (SELECT id FROM stores WHERE uuid = ?)", arguments: [storeUUID])
        }
    }

    /// The progress saved with earlier batches (``IndexBatch/deferredDependents``) of the related objects
    /// whose dependents are still being re-indexed, by the object's URI: what a follower resumes, and what
    /// "findable" waits for besides the token.
    public func deferredDependents(storeUUID: String) throws(SearchIndexError) -> [String: String] {
        try read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT d.uri, d.progress FROM deferred_dependents d JOIN stores s ON s.id = d.store_id WHERE s.uuid = ?
                """, arguments: [storeUUID])
            var found: [String: String] = [:]
            // A progress that is not text (a damaged file) is still a walk: handed back empty, it is walked again.
            // Decoded without trapping: GRDB's typed subscript stops the process on bytes that are not UTF-8.
            for row in rows {
                if let uri = String.fromDatabaseValue(row[0]) { found[uri] = String.fromDatabaseValue(row[1]) ?? "" }
            }
            return found
        }
    }

    /// The digests saved with earlier batches (``IndexBatch/shownValues``) of the related objects named,
    /// by URI; objects without one are absent.
    public func shownValues(for uris: [String]) throws(SearchIndexError) -> [String: String] {
        guard !uris.isEmpty else { return [:] }
        return try read { db in
            var found: [String: String] = [:]
            let statement = try db.cachedStatement(sql: "SELECT digest FROM shown_values WHERE uri = ?")
            for uri in uris {
                if let digest = try String.fetchOne(statement, arguments: [uri]) { found[uri] = digest }
            }
            return found
        }
    }

    /// Ends a rebuild: removes the store's items it did not write again (their objects are gone), in
    /// transactions of `batchSize`, then commits `checkpoint` with the marks cleared. Interrupted, calling
    /// again finishes it. Returns the number of items removed.
    @discardableResult
    public func sweep(keeping checkpoint: StoreCheckpoint, batchSize: Int = 10_000) throws(SearchIndexError) -> Int {
        var removed = 0
        var after: Int64 = 0
        while true {
            // Whether it is done, and found the store.
            let (done, found): (Bool, Bool) = try write { db in
                guard let storeID = try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [checkpoint.storeUUID]) else { return (true, false) }
                let rows = try Row.fetchAll(db, sql: """
                    SELECT i.id, i.display_name, t.title, t.text, t.keywords FROM items i JOIN item_texts t ON t.id = i.id
                    WHERE i.store_id = ? AND i.id > ? AND NOT EXISTS (SELECT 1 FROM rebuild_marks m WHERE m.id = i.id)
                    ORDER BY i.id LIMIT ?
                    """, arguments: [storeID, after, batchSize])
                let removals = try RemovalStatements(db)
                for row in rows { try removals.delete(row, db: db) }
                removed += rows.count
                guard let last = rows.last else { return (true, true) }
                after = try last.integer(0)
                return (false, true)
            }
            guard done else { continue }
            // A rebuild's end, as a first export's: the dictionary becomes the vocabulary again (the rebuild's new
            // terms in, the terms of the items it swept, and of any deleted since the last rebuild, out) and the
            // leader lists are listed anew, since the rebuild rewrote every item.
            if found { try finishExport(checkpoint, clearingRebuildMarks: true) }
            return removed
        }
    }
}
