import Foundation
import GRDB
import CSearchTokenizer
import GRDBSQLite

extension SearchIndex {
    /// Applies upserts, deletes and the store's checkpoint in one transaction.
    ///
    /// Upserts are idempotent (applying a batch twice leaves the same index); a delete of a URI the
    /// index does not hold is a no-op. On any error nothing is written.
    @discardableResult
    public func apply(_ batch: IndexBatch) throws(SearchIndexError) -> BatchResult {
        try write { db in try Self.apply(batch, db: db) }
    }

    /// Applies batches in order in one transaction, pulling each from `next` until it returns nil: a bulk
    /// export commits several pages at once (each commit costs a sync and a full-text segment) while still
    /// receiving them one by one. Each batch's checkpoint is written over the previous one, so the
    /// transaction commits the last; on any error, nothing of any batch is written.
    @discardableResult
    public func apply(batchesFrom next: () throws -> IndexBatch?) throws(SearchIndexError) -> BatchResult {
        try write { db in
            var total = BatchResult()
            while let batch = try next() {
                let result = try Self.apply(batch, db: db)
                total.inserted += result.inserted
                total.updated += result.updated
                total.deleted += result.deleted
                total.unchanged += result.unchanged
            }
            return total
        }
    }

    private static func apply(_ batch: IndexBatch, db: Database) throws -> BatchResult {
        let exporting = try String.fetchOne(db, sql: "SELECT export_state FROM stores WHERE uuid = ?", arguments: [batch.checkpoint.storeUUID]) != nil
        let storeID = try saveCheckpoint(batch.checkpoint, db: db)
        var result = BatchResult(inserted: 0, updated: 0, deleted: 0)
        let deleted = Set(batch.deletes)
        for uri in batch.deletes where try delete(uri: uri, db: db) { result.deleted += 1 }
        if batch.forgetsStoreShownValues { try db.execute(sql: "DELETE FROM shown_values WHERE store_id = ?", arguments: [storeID]) }
        if !batch.forgottenShownValues.isEmpty || !batch.shownValues.isEmpty {
            let forget = try db.cachedStatement(sql: "DELETE FROM shown_values WHERE uri = ?")
            for uri in batch.forgottenShownValues { try forget.execute(arguments: [uri]) }
            let save = try db.cachedStatement(sql: "INSERT OR REPLACE INTO shown_values (uri, store_id, digest) VALUES (?, ?, ?)")
            for (uri, digest) in batch.shownValues { try save.execute(arguments: [uri, storeID, digest]) }
        }
        // Looking statements up by their SQL text for every item cost more than hashing is worth.
        let statements = try UpsertStatements(db)
        let mark = batch.marksRebuild ? try db.cachedStatement(sql: "INSERT OR IGNORE INTO rebuild_marks (id, store_id) VALUES (?, ?)") : nil
        // Items prepared ahead by the caller, or here, untokenized: an unchanged item is never tokenized.
        let prepared = batch.prepared ?? batch.upserts.map { PreparedItem($0, tokenized: false) }
        // An unfinished export's terms are discarded below: not collecting them at all saves a hash per token.
        let pausesTerms = batch.checkpoint.exportState != nil
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
        // with the batch that ends it (a batch's new terms are mostly not new after the first batches,
        // and looking each up again cost a fifth of a bulk export); otherwise each batch adds its own.
        if batch.checkpoint.exportState != nil {
            TermDictionary.discardNewTerms(db)
        } else if exporting {
            try TermDictionary.refresh(db)
        } else {
            try TermDictionary.saveNewTerms(db)
        }
        return result
    }

    /// The prepared statements of the upsert path, looked up once per batch.
    private struct UpsertStatements {
        let existing, insert, update, insertTexts, updateTexts, insertText, insertPlace, insertAttribute: Statement
        /// The connection tokenizer's offers: FTS5 takes an item's prepared tokens from them.
        let tokenOffers: UnsafeMutableRawPointer?

        init(_ db: Database) throws {
            tokenOffers = searchlight_token_offers(db.sqliteConnection)
            existing = try db.cachedStatement(sql: """
                SELECT i.id, i.display_name, t.title, t.text, t.keywords, i.entity, i.latitude, i.longitude, i.date, i.rank, i.attributes
                FROM items i JOIN item_texts t ON t.id = i.id WHERE i.uri = ?
                """)
            insert = try db.cachedStatement(sql: """
                INSERT INTO items (uri, store_id, entity, display_name, latitude, longitude, date, rank, value_lengths, attributes)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(uri) DO NOTHING
                """)
            update = try db.cachedStatement(sql: """
                UPDATE items SET store_id = ?, entity = ?, display_name = ?, latitude = ?, longitude = ?, date = ?, rank = ?,
                    value_lengths = ?, attributes = ?
                WHERE id = ?
                """)
            insertTexts = try db.cachedStatement(sql: "INSERT INTO item_texts (id, title, text, keywords) VALUES (?, ?, ?, ?)")
            updateTexts = try db.cachedStatement(sql: "UPDATE item_texts SET title = ?, text = ?, keywords = ? WHERE id = ?")
            insertText = try db.cachedStatement(sql: "INSERT INTO items_fts (rowid, display_name, title, text, keywords) VALUES (?, ?, ?, ?, ?)")
            insertPlace = try db.cachedStatement(sql: "INSERT INTO items_geo (id, min_lat, max_lat, min_lon, max_lon) VALUES (?, ?, ?, ?, ?)")
            insertAttribute = try db.cachedStatement(sql: "INSERT INTO item_attributes (item_id, name, kind, number, text) VALUES (?, ?, ?, ?, ?)")
        }
    }

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
                DELETE FROM item_terms; DELETE FROM shown_values; DELETE FROM stores WHERE id = \(storeID);
                """)
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
                for row in rows { try Self.delete(row, db: db) }
                // The deleted items' terms are not new; the table is brought back to the vocabulary at the end.
                TermDictionary.discardNewTerms(db)
                removed += rows.count
                guard let last = rows.last else {
                    try db.execute(sql: "DELETE FROM rebuild_marks WHERE store_id = ?", arguments: [storeID])
                    try db.execute(sql: "DELETE FROM shown_values WHERE store_id = ?", arguments: [storeID])
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
    /// what its related objects show now, which an older digest may not describe.
    public func beginRebuild(storeUUID: String) throws(SearchIndexError) {
        try write { db in
            try db.execute(sql: "DELETE FROM rebuild_marks WHERE store_id = (SELECT id FROM stores WHERE uuid = ?)", arguments: [storeUUID])
            try db.execute(sql: "DELETE FROM shown_values WHERE store_id = (SELECT id FROM stores WHERE uuid = ?)", arguments: [storeUUID])
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
            let done: Bool = try write { db in
                guard let storeID = try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [checkpoint.storeUUID]) else { return true }
                let rows = try Row.fetchAll(db, sql: """
                    SELECT i.id, i.display_name, t.title, t.text, t.keywords FROM items i JOIN item_texts t ON t.id = i.id
                    WHERE i.store_id = ? AND i.id > ? AND NOT EXISTS (SELECT 1 FROM rebuild_marks m WHERE m.id = i.id)
                    ORDER BY i.id LIMIT ?
                    """, arguments: [storeID, after, batchSize])
                for row in rows { try Self.delete(row, db: db) }
                TermDictionary.discardNewTerms(db)
                removed += rows.count
                guard let last = rows.last else {
                    try db.execute(sql: "DELETE FROM rebuild_marks WHERE store_id = ?", arguments: [storeID])
                    _ = try Self.saveCheckpoint(checkpoint, db: db)
                    // A rebuild's end: the dictionary becomes the vocabulary again — the rebuild's new terms in,
                    // the terms of the items it swept (and of any deleted since the last rebuild) out.
                    try TermDictionary.refresh(db)
                    return true
                }
                after = try last.integer(0)
                return false
            }
            if done { return removed }
        }
    }

    /// The checkpoint of a store, if the index holds one.
    public func checkpoint(storeUUID: String) throws(SearchIndexError) -> StoreCheckpoint? {
        try checkpoints().first { $0.storeUUID == storeUUID }
    }

    /// Every store's checkpoint, by UUID.
    public func checkpoints() throws(SearchIndexError) -> [StoreCheckpoint] {
        try read { db in try Self.fetchCheckpoints(db) }
    }

    static func fetchCheckpoints(_ db: Database) throws -> [StoreCheckpoint] {
        let sql = "SELECT uuid, path, token, model_digest, configuration_digest, export_state, updated_at, token_timestamp, configuration, entity_parents FROM stores ORDER BY uuid"
        // Decoded with their types checked: a damaged index is an error to report, not a trap.
        return try Row.fetchAll(db.cachedStatement(sql: sql)).map { row in
            StoreCheckpoint(storeUUID: try row.text(0), storePath: try row.text(1), token: try row.integer(2),
                            modelDigest: try row.optionalText(3), configurationDigest: try row.optionalText(4),
                            exportState: try row.optionalText(5),
                            updatedAt: Date(timeIntervalSinceReferenceDate: try row.optionalNumber(6) ?? 0),
                            tokenTimestamp: try row.optionalNumber(7).map(Date.init(timeIntervalSinceReferenceDate:)),
                            configuration: try row.optionalText(8), entityParents: Self.parents(try row.optionalText(9)))
        }
    }

    private static func saveCheckpoint(_ checkpoint: StoreCheckpoint, db: Database) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO stores (uuid, path, token, model_digest, configuration_digest, export_state, updated_at, token_timestamp, configuration,
                                entity_parents)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(uuid) DO UPDATE SET path = excluded.path, token = excluded.token, model_digest = excluded.model_digest,
                configuration_digest = excluded.configuration_digest, export_state = excluded.export_state, updated_at = excluded.updated_at,
                token_timestamp = excluded.token_timestamp, configuration = excluded.configuration, entity_parents = excluded.entity_parents
            """, arguments: [checkpoint.storeUUID, checkpoint.storePath, checkpoint.token, checkpoint.modelDigest,
                             checkpoint.configurationDigest, checkpoint.exportState, checkpoint.updatedAt.timeIntervalSinceReferenceDate,
                             checkpoint.tokenTimestamp.map(\.timeIntervalSinceReferenceDate).flatMap { $0.isFinite ? $0 : nil },
                             checkpoint.configuration, Self.parentsText(checkpoint.entityParents)])
        return try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [checkpoint.storeUUID]) ?? 0
    }

    /// `Child<TAB>Parent` lines, sorted, or NULL when there are none.
    static func parentsText(_ parents: [String: String]) -> String? {
        parents.isEmpty ? nil : parents.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)" }.joined(separator: "\n")
    }

    static func parents(_ text: String?) -> [String: String] {
        var parents: [String: String] = [:]
        for line in (text ?? "").split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2 { parents[String(parts[0])] = String(parts[1]) }
        }
        return parents
    }

    /// Text fields are stored joined by U+001F, which no tokenizer treats as part of a word.
    static let fieldSeparator = "\u{1F}"

    static func joined(_ fields: [String]) -> String {
        // Scanning bytes is cheap; Foundation's replacingOccurrences on every field was not.
        fields.map { field in
            field.utf8.contains(0x1F) ? String(decoding: field.utf8.map { $0 == 0x1F ? 0x20 : $0 }, as: UTF8.self) : field
        }.joined(separator: fieldSeparator)
    }

    /// Filter attributes in one canonical text (names sorted, values in order): equal text, equal attributes.
    static func encoded(_ attributes: [String: [FilterValue]]) -> String {
        var encoded = ""
        for (offset, (name, values)) in attributes.sorted(by: { $0.key < $1.key }).enumerated() {
            if offset > 0 { encoded += "\u{1D}" }
            encoded += name
            encoded += "="
            for (index, value) in values.enumerated() {
                if index > 0 { encoded += "\u{1E}" }
                switch value {
                case .string(let text):
                    encoded += "s"
                    // A value separator inside a value reads as a space (Foundation's replacing was a tenth of
                    // preparing an item, for a character that never occurs).
                    encoded += text.utf8.contains(0x1E) ? String(decoding: text.utf8.map { $0 == 0x1E ? 0x20 : $0 }, as: UTF8.self) : text
                case .number(let number): encoded += "n" + number.description
                case .date(let date): encoded += "d" + date.timeIntervalSinceReferenceDate.description
                }
            }
        }
        return encoded
    }

    private enum UpsertOutcome { case inserted, updated, unchanged }

    /// Inserts or replaces an item. An item identical to the indexed one is left alone: re-indexing the
    /// places of a country whose `places` relationship changed rewrites nothing in FTS5 or the R-tree.
    private static func upsert(_ prepared: inout PreparedItem, storeID: Int64, statements: UpsertStatements, db: Database) throws -> (UpsertOutcome, Int64?) {
        let item = prepared.item, text = prepared.text, keywords = prepared.keywords
        let location = item.hasLocation
        // An item prepared ahead is most likely new (a first export): inserting unless the URI exists is
        // its only lookup. Any other item is looked up first, so that one found unchanged is never tokenized.
        let oldRow = statements.existing
        var existing: Row?
        // An item whose replaced text was read ahead exists (or existed): looked up first too.
        if prepared.tokens == nil || prepared.replaced != nil {
            existing = try Row.fetchOne(oldRow, arguments: [item.uri])
            if existing == nil { prepared.tokenize() }
        }
        var isNew = false
        if existing == nil {
            let insert = statements.insert
            try RowValues(prepared: prepared, storeID: storeID, location: location).bind(to: insert, startingAt: 1, uriFirst: true)
            try step(insert, db: db)
            isNew = db.changesCount > 0
            if !isNew { existing = try Row.fetchOne(oldRow, arguments: [item.uri]) }
        }
        let id: Int64
        // What an update leaves as it was is not written again: a country renamed rewrites its places'
        // text, not their places in the R-tree or their filter attributes (a dozen b-tree writes each).
        var writesText = true, writesPlace = true, writesAttributes = true
        if isNew {
            id = db.lastInsertedRowID
            let texts = statements.insertTexts
            sqlite3_reset(texts.sqliteStatement)
            sqlite3_bind_int64(texts.sqliteStatement, 1, id)
            SQLiteCall.bindText(texts.sqliteStatement, 2, item.title)
            SQLiteCall.bindText(texts.sqliteStatement, 3, text)
            SQLiteCall.bindText(texts.sqliteStatement, 4, keywords)
            try step(texts, db: db)
        } else {
            guard let old = existing else { return (.unchanged, nil) }
            let oldLatitude = try old.optionalNumber(6), oldLongitude = try old.optionalNumber(7), oldDate = try old.optionalNumber(8)
            let oldRank = try old.number(9)
            writesText = try !(old.text(1) == item.displayName && old.text(2) == item.title && old.text(3) == text && old.text(4) == keywords)
            writesPlace = oldLatitude != (location ? item.latitude : nil) || oldLongitude != (location ? item.longitude : nil)
            writesAttributes = try old.text(10) != prepared.attributes
            if try !writesText && !writesPlace && !writesAttributes && old.text(5) == item.entity
                && oldDate == item.date?.timeIntervalSinceReferenceDate && oldRank == item.rank {
                return (.unchanged, try old.integer(0))
            }
            id = try old.integer(0)
            if writesText {
                // The old text's tokens, read and tokenized ahead, replay for FTS5's delete.
                defer { if let offers = statements.tokenOffers, prepared.replaced != nil { searchlight_withdraw_tokens(offers) } }
                if let offers = statements.tokenOffers, let replaced = prepared.replaced {
                    for (text, stream) in zip(replaced.texts, replaced.streams) { offer(stream, for: text, to: offers) }
                }
                try Self.removeText(old, db: db)
            }
            // The row's value lengths come from the tokens (a no-op for an item prepared ahead).
            prepared.tokenize()
            let update = statements.update
            try RowValues(prepared: prepared, storeID: storeID, location: location).bind(to: update, startingAt: 1, uriFirst: false)
            sqlite3_bind_int64(update.sqliteStatement, 10, id)
            try step(update, db: db)
            if writesText {
                let texts = statements.updateTexts
                sqlite3_reset(texts.sqliteStatement)
                SQLiteCall.bindText(texts.sqliteStatement, 1, item.title)
                SQLiteCall.bindText(texts.sqliteStatement, 2, text)
                SQLiteCall.bindText(texts.sqliteStatement, 3, keywords)
                sqlite3_bind_int64(texts.sqliteStatement, 4, id)
                try step(texts, db: db)
            }
            if writesPlace { try db.cachedStatement(sql: "DELETE FROM items_geo WHERE id = ?").execute(arguments: [id]) }
            if writesAttributes { try db.cachedStatement(sql: "DELETE FROM item_attributes WHERE item_id = ?").execute(arguments: [id]) }
        }
        // Bound with the C API, like the item's other rows: an attribute row per value is the bulk of a
        // filtered export's writes.
        let attribute = statements.insertAttribute.sqliteStatement
        for (name, values) in item.attributes where writesAttributes {
            for value in values where value.numberColumn?.isFinite ?? true {
                sqlite3_reset(attribute)
                sqlite3_bind_int64(attribute, 1, id)
                SQLiteCall.bindText(attribute, 2, name)
                sqlite3_bind_int64(attribute, 3, Int64(value.kindCode))
                if let number = value.numberColumn { sqlite3_bind_double(attribute, 4, number) } else { sqlite3_bind_null(attribute, 4) }
                if let text = value.textColumn { SQLiteCall.bindText(attribute, 5, text) } else { sqlite3_bind_null(attribute, 5) }
                try step(statements.insertAttribute, db: db)
            }
        }
        if writesText {
            let fts = statements.insertText
            let handle = fts.sqliteStatement
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 1, id)
            SQLiteCall.bindText(handle, 2, item.displayName)
            SQLiteCall.bindText(handle, 3, item.title)
            SQLiteCall.bindText(handle, 4, text)
            SQLiteCall.bindText(handle, 5, keywords)
            defer { if let offers = statements.tokenOffers { searchlight_withdraw_tokens(offers) } }
            offerTokens(of: prepared, to: statements.tokenOffers)
            try step(fts, db: db)
        }
        if writesPlace, location, let latitude = item.latitude, let longitude = item.longitude {
            let geo = statements.insertPlace
            let handle = geo.sqliteStatement
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 1, id)
            for (index, value) in [latitude, latitude, longitude, longitude].enumerated() { sqlite3_bind_double(handle, Int32(index + 2), value) }
            try step(geo, db: db)
        }
        return (isNew ? .inserted : .updated, id)
    }

    /// Offers the FTS5 columns' prepared tokens to the connection's tokenizer for the next insert.
    private static func offerTokens(of prepared: PreparedItem, to offers: UnsafeMutableRawPointer?) {
        guard let offers, let streams = prepared.tokens?.streams else { return }
        for (text, stream) in zip([prepared.item.displayName, prepared.item.title, prepared.text, prepared.keywords], streams) {
            offer(stream, for: text, to: offers)
        }
    }

    /// Offers one text's token stream (nil: nothing to offer). An offer only saves work: one that cannot be
    /// made (no memory for its copy) leaves the tokenizer to run, with the same tokens.
    private static func offer(_ stream: [UInt8]?, for text: String, to offers: UnsafeMutableRawPointer) {
        guard let stream else { return }
        var text = text
        _ = text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { characters in
                stream.withUnsafeBufferPointer { bytes in
                    searchlight_offer_tokens(offers, characters.baseAddress, Int32(characters.count), bytes.baseAddress, Int32(bytes.count))
                }
            }
        }
    }

    /// The item columns, bound straight onto a prepared statement: GRDB's generic argument arrays
    /// cost more than the insert itself on a bulk export.
    private struct RowValues {
        var item: IndexedItem, storeID: Int64, location: Bool
        /// Computed by the caller: a new item is tokenized before its row is bound.
        var valueLengths: String, attributes: String

        init(prepared: PreparedItem, storeID: Int64, location: Bool) {
            item = prepared.item
            self.storeID = storeID
            self.location = location
            valueLengths = prepared.tokens?.valueLengths ?? ""
            attributes = prepared.attributes
        }

        func bind(to statement: Statement, startingAt first: Int32, uriFirst: Bool) throws {
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            var index = first
            func next() -> Int32 { defer { index += 1 }; return index }
            if uriFirst { SQLiteCall.bindText(handle, next(), item.uri) }
            sqlite3_bind_int64(handle, next(), storeID)
            SQLiteCall.bindText(handle, next(), item.entity)
            SQLiteCall.bindText(handle, next(), item.displayName)
            if location, let latitude = item.latitude, let longitude = item.longitude {
                sqlite3_bind_double(handle, next(), latitude)
                sqlite3_bind_double(handle, next(), longitude)
            } else {
                sqlite3_bind_null(handle, next())
                sqlite3_bind_null(handle, next())
            }
            // SQLite stores NaN as NULL, which the rank column refuses: a non-finite number is no number.
            if let date = item.date, date.timeIntervalSinceReferenceDate.isFinite {
                sqlite3_bind_double(handle, next(), date.timeIntervalSinceReferenceDate)
            } else {
                sqlite3_bind_null(handle, next())
            }
            let rank = item.rank.isFinite ? item.rank : 0
            sqlite3_bind_double(handle, next(), rank)
            SQLiteCall.bindText(handle, next(), valueLengths)
            SQLiteCall.bindText(handle, next(), attributes)
        }
    }

    /// Steps a statement that returns no row (or one, ignored) and resets it.
    private static func step(_ statement: Statement, db: Database) throws {
        defer { sqlite3_reset(statement.sqliteStatement) }
        _ = try SQLiteCall.step(statement.sqliteStatement, db: db)
    }

    /// Removes an item; true when it existed.
    private static func delete(uri: String, db: Database) throws -> Bool {
        guard let old = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, display_name, title, text, keywords FROM items_content WHERE id = (SELECT id FROM items WHERE uri = ?)"),
                                         arguments: [uri]) else { return false }
        try delete(old, db: db)
        return true
    }

    /// Removes the item of a row `(id, display_name, title, text, keywords)` from every table.
    private static func delete(_ old: Row, db: Database) throws {
        let id: Int64 = old[0]
        try removeText(old, db: db)
        try db.cachedStatement(sql: "DELETE FROM items WHERE id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM item_texts WHERE id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM items_geo WHERE id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM item_attributes WHERE item_id = ?").execute(arguments: [id])
    }

    /// Takes an item's text out of FTS5. The content is external, so FTS5 must be told the old values
    /// (row `(id, display_name, title, text, keywords, …)`) to find the tokens to remove.
    private static func removeText(_ old: Row, db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO items_fts (items_fts, rowid, display_name, title, text, keywords) VALUES ('delete', ?, ?, ?, ?, ?)")
            .execute(arguments: [old[0], old[1], old[2], old[3], old[4]])
    }
}

extension SearchIndex {
    /// Merges the full-text index into one segment: queries then probe one b-tree instead of many.
    /// Worth running after a large first export; batches keep appending (and merging) afterwards.
    public func optimize() throws(SearchIndexError) {
        try write { db in try db.execute(sql: "INSERT INTO items_fts (items_fts) VALUES ('optimize')") }
    }
}
