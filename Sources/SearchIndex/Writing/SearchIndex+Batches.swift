import Foundation
import GRDB
import CSearchTokenizer
import GRDBSQLite

extension SearchIndex {
    /// Applies upserts, deletes and the store's checkpoint in one transaction.
    ///
    /// Upserts are idempotent (applying a batch twice leaves the same index); a delete of a URI the
    /// index does not hold is a no-op. On any error nothing is written, but for the batch that ends a first
    /// export (its checkpoint has no ``StoreCheckpoint/exportState`` where the index's has one): it commits
    /// its items with the export state the index had, and the export then ends in a transaction of its own
    /// (its checkpoint, the typo dictionary and the term lists). When that second transaction fails, the error
    /// is thrown with the items committed; applying the batch again, as a resumed export does, ends it.
    @discardableResult
    public func apply(_ batch: IndexBatch) throws(SearchIndexError) -> BatchResult {
        var pending: IndexBatch? = batch
        return try apply(batchesFrom: {
            defer { pending = nil }
            return pending
        })
    }

    /// Applies batches in order in one transaction, pulling each from `next` until it returns nil: a bulk
    /// export commits several pages at once (each commit costs a sync and a full-text segment) while still
    /// receiving them one by one. Each batch's checkpoint is written over the previous one, so the
    /// transaction commits the last; on any error, nothing of any batch is written. A batch ending an export
    /// commits as ``apply(_:)`` says.
    @discardableResult
    public func apply(batchesFrom next: () throws -> IndexBatch?) throws(SearchIndexError) -> BatchResult {
        var endings: [String: StoreCheckpoint] = [:]
        let result = try write { db in
            var total = BatchResult()
            while let batch = try next() {
                total.add(try Self.apply(batch, db: db, endings: &endings))
            }
            return total
        }
        for ending in endings.values.sorted(by: { $0.storeUUID < $1.storeUUID }) { try finishExport(ending, clearingRebuildMarks: false) }
        return result
    }

    /// Applies one batch. When it ends an export, its checkpoint is written with the export state the index
    /// had (a crash before the end resumes the export, which reads its last page again) and kept in
    /// `endings` by store, for ``finishExport(_:clearingRebuildMarks:)`` once this transaction commits; a
    /// later batch of the same store that does not end an export takes it out again.
    static func apply(_ batch: IndexBatch, db: Database, endings: inout [String: StoreCheckpoint]) throws -> BatchResult {
        let exportState = try String.fetchOne(db, sql: "SELECT export_state FROM stores WHERE uuid = ?", arguments: [batch.checkpoint.storeUUID])
        var checkpoint = batch.checkpoint
        let ends = exportState != nil && checkpoint.exportState == nil
        endings[checkpoint.storeUUID] = ends ? batch.checkpoint : nil
        if ends { checkpoint.exportState = exportState }
        let storeID = try saveCheckpoint(checkpoint, db: db)
        var result = BatchResult(inserted: 0, updated: 0, deleted: 0)
        let deleted = Set(batch.deletes)
        // An export's pages rewrite the store's items: the stored facet columns go rather than note each item,
        // and the export's end stores them again (readers read the value indexes meanwhile).
        if exportState != nil || batch.checkpoint.exportState != nil { try FacetColumn.dropStored(db) }
        // Looking statements up by their SQL text for every item cost more than hashing is worth.
        let statements = try UpsertStatements(db)
        for uri in batch.deletes where try delete(uri: uri, removals: statements.removals, db: db) { result.deleted += 1 }
        if batch.forgetsStoreShownValues {
            try db.execute(sql: "DELETE FROM shown_values WHERE store_id = ?", arguments: [storeID])
            try db.execute(sql: "DELETE FROM deferred_dependents WHERE store_id = ?", arguments: [storeID])
        }
        if !batch.forgottenShownValues.isEmpty || !batch.shownValues.isEmpty {
            let forget = try db.cachedStatement(sql: "DELETE FROM shown_values WHERE uri = ?")
            for uri in batch.forgottenShownValues { try forget.execute(arguments: [uri]) }
            let save = try db.cachedStatement(sql: "INSERT OR REPLACE INTO shown_values (uri, store_id, digest) VALUES (?, ?, ?)")
            for (uri, digest) in batch.shownValues { try save.execute(arguments: [uri, storeID, digest]) }
        }
        let finished = batch.forgottenShownValues + batch.finishedDeferredDependents
        if !finished.isEmpty || !batch.deferredDependents.isEmpty {
            let finish = try db.cachedStatement(sql: "DELETE FROM deferred_dependents WHERE uri = ?")
            for uri in finished { try finish.execute(arguments: [uri]) }
            let save = try db.cachedStatement(sql: "INSERT OR REPLACE INTO deferred_dependents (uri, store_id, progress) VALUES (?, ?, ?)")
            for (uri, progress) in batch.deferredDependents { try save.execute(arguments: [uri, storeID, progress]) }
        }
        let mark = batch.marksRebuild ? try db.cachedStatement(sql: "INSERT OR IGNORE INTO rebuild_marks (id, store_id) VALUES (?, ?)") : nil
        // Items prepared ahead by the caller, or here, untokenized: an unchanged item is never tokenized.
        let prepared = batch.preparedUpserts
        // An unfinished export's terms are discarded below: not collecting them at all saves a hash per token.
        let pausesTerms = checkpoint.exportState != nil
        if let offers = statements.tokenOffers, pausesTerms { searchlight_pause_terms(offers, 1) }
        defer { if let offers = statements.tokenOffers, pausesTerms { searchlight_pause_terms(offers, 0) } }
        for var item in prepared where deleted.isEmpty || !deleted.contains(item.item.uri) {
            let (outcome, id) = try upsert(&item, storeID: storeID, statements: statements, db: db)
            switch outcome {
            case .inserted: result.inserted += 1
            case .updated: result.updated += 1
            case .unchanged: result.unchanged += 1
            }
            if let mark, let id { try mark.execute(arguments: [id, storeID]) }
        }
        // The typo dictionary: during a first export or a rebuild it is filled once, from the vocabulary,
        // when it ends (a batch's new terms are mostly not new after the first batches, and looking each up
        // again cost a fifth of a bulk export); otherwise each batch adds its own.
        if checkpoint.exportState != nil {
            TermDictionary.discardNewTerms(db)
        } else {
            try TermDictionary.saveNewTerms(db)
        }
        return result
    }

    /// The prepared statements of the upsert path, looked up once per batch.
    struct UpsertStatements {
        let existing, insert, update, insertTexts, updateTexts, insertText, insertPlace, insertAttribute: Statement
        /// An update's removals: the old text out of FTS5, the old place and attributes (a rename's per-item writes).
        let removals: RemovalStatements
        /// The connection tokenizer's offers: FTS5 takes an item's prepared tokens from them.
        var tokenOffers: UnsafeMutableRawPointer? { removals.tokenOffers }

        init(_ db: Database) throws {
            existing = try db.cachedStatement(sql: """
                SELECT i.id, i.display_name, t.title, t.text, t.keywords, i.entity, i.latitude, i.longitude, i.date, i.rank, i.attributes
                FROM items i JOIN item_texts t ON t.id = i.id WHERE i.uri = ?
                """)
            insert = try db.cachedStatement(sql: """
                INSERT INTO items (uri, store_id, entity, display_name, latitude, longitude, date, rank, value_lengths, attributes, term_vector)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(uri) DO NOTHING
                """)
            update = try db.cachedStatement(sql: """
                UPDATE items SET store_id = ?, entity = ?, display_name = ?, latitude = ?, longitude = ?, date = ?, rank = ?,
                    value_lengths = ?, attributes = ?, term_vector = ?
                WHERE id = ?
                """)
            insertTexts = try db.cachedStatement(sql: "INSERT INTO item_texts (id, title, text, keywords) VALUES (?, ?, ?, ?)")
            updateTexts = try db.cachedStatement(sql: "UPDATE item_texts SET title = ?, text = ?, keywords = ? WHERE id = ?")
            insertText = try db.cachedStatement(sql: "INSERT INTO items_fts (rowid, display_name, title, text, keywords) VALUES (?, ?, ?, ?, ?)")
            insertPlace = try db.cachedStatement(sql: "INSERT INTO items_geo (id, min_lat, max_lat, min_lon, max_lon) VALUES (?, ?, ?, ?, ?)")
            insertAttribute = try db.cachedStatement(sql: "INSERT INTO item_attributes (item_id, name, kind, number, text) VALUES (?, ?, ?, ?, ?)")
            removals = try RemovalStatements(db)
        }
    }

    /// The prepared statements that take an item, or parts of it, out of the index: looked up once per batch
    /// or page, bound through the C API (the update path, deletes, a store's removal, a rebuild's sweep).
    struct RemovalStatements {
        let removeText, removePlace, removeAttributes, removeItem, removeItemTexts: Statement
        /// The connection tokenizer's offers, which also keep the typo term table's replacement stage.
        let tokenOffers: UnsafeMutableRawPointer?
        /// Notes an item whose attributes changed, for the stored facet columns; nil when none is stored.
        let noteChange: Statement?

        init(_ db: Database) throws {
            tokenOffers = searchlight_token_offers(db.sqliteConnection)
            // FTS5's delete of an external-content row: it must be told the old values to find their tokens.
            removeText = try db.cachedStatement(sql: "INSERT INTO items_fts (items_fts, rowid, display_name, title, text, keywords) VALUES ('delete', ?, ?, ?, ?, ?)")
            removePlace = try db.cachedStatement(sql: "DELETE FROM items_geo WHERE id = ?")
            removeAttributes = try db.cachedStatement(sql: "DELETE FROM item_attributes WHERE item_id = ?")
            removeItem = try db.cachedStatement(sql: "DELETE FROM items WHERE id = ?")
            removeItemTexts = try db.cachedStatement(sql: "DELETE FROM item_texts WHERE id = ?")
            noteChange = try FacetColumn.changeNote(db)
        }

        /// Notes that item `id`'s attributes were written or removed: a reader of a stored facet column reads
        /// them from `item_attributes` instead.
        func noteAttributesChanged(_ id: Int64, db: Database) throws {
            guard let noteChange else { return }
            try remove(noteChange, id: id, db: db)
        }

        /// Takes an item's old text out of FTS5: row `(id, display_name, title, text, keywords, …)`.
        ///
        /// Its words are recorded, not collected for the typo term table, which has them since the row was
        /// written; a new text inserted next collects only the words the old one lacked, until
        /// ``endReplacement()`` (`searchlight_replacing_terms`). A renamed country's places hand the table
        /// their new words instead of all their words twice.
        func removeText(_ old: Row, db: Database) throws {
            if let tokenOffers { searchlight_replacing_terms(tokenOffers, SEARCHLIGHT_TERMS_OLD_ROW) }
            let handle = removeText.sqliteStatement
            sqlite3_reset(handle)
            for column in 0..<5 { SQLiteCall.bind(old[column] as DatabaseValue, handle, Int32(column + 1)) }
            try SearchIndex.step(removeText, db: db)
            if let tokenOffers { searchlight_replacing_terms(tokenOffers, SEARCHLIGHT_TERMS_NEW_ROW) }
        }

        /// Ends what ``removeText(_:db:)`` began: every document's words are collected again.
        func endReplacement() {
            if let tokenOffers { searchlight_replacing_terms(tokenOffers, 0) }
        }

        /// Runs a one-parameter removal (`removePlace`, `removeAttributes`, …) for an item.
        func remove(_ statement: Statement, id: Int64, db: Database) throws {
            sqlite3_bind_int64(statement.sqliteStatement, 1, id)
            try SearchIndex.step(statement, db: db)
        }

        /// Removes the item of a row `(id, display_name, title, text, keywords)` from every table.
        func delete(_ old: Row, db: Database) throws {
            let id: Int64 = old[0]
            defer { endReplacement() }
            try removeText(old, db: db)
            for statement in [removeItem, removeItemTexts, removePlace, removeAttributes] { try remove(statement, id: id, db: db) }
            try noteAttributesChanged(id, db: db)
        }
    }
}

extension SearchIndex {
    /// Merges the full-text index into one segment: queries then probe one b-tree instead of many.
    /// Worth running after a large first export; batches keep appending (and merging) afterwards.
    public func optimize() throws(SearchIndexError) {
        try write { db in try db.execute(sql: "INSERT INTO items_fts (items_fts) VALUES ('optimize')") }
    }
}
