import Foundation
import GRDB
import CSearchTokenizer
import GRDBSQLite

/// Writing one item: only the parts that changed (text, R-tree, attributes), its tokens offered to FTS5.
extension SearchIndex {
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

    enum UpsertOutcome { case inserted, updated, unchanged }

    /// Inserts or replaces an item. An item identical to the indexed one is left alone: re-indexing the
    /// places of a country whose `places` relationship changed rewrites nothing in FTS5 or the R-tree.
    static func upsert(_ prepared: inout PreparedItem, storeID: Int64, statements: UpsertStatements, db: Database) throws -> (UpsertOutcome, Int64?) {
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
        // An update's old text leaves FTS5 before its new text enters it: only then are words collected again.
        defer { statements.removals.endReplacement() }
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
            // Byte for byte: a text that changed only in its normalization changed (see `BinaryCollation.equal`).
            writesText = try !(BinaryCollation.equal(old.text(1), item.displayName) && BinaryCollation.equal(old.text(2), item.title)
                && BinaryCollation.equal(old.text(3), text) && BinaryCollation.equal(old.text(4), keywords))
            writesPlace = oldLatitude != (location ? item.latitude : nil) || oldLongitude != (location ? item.longitude : nil)
            writesAttributes = try !BinaryCollation.equal(old.text(10), prepared.attributes)
            if try !writesText && !writesPlace && !writesAttributes && BinaryCollation.equal(old.text(5), item.entity)
                && oldDate == item.date?.timeIntervalSinceReferenceDate && oldRank == item.rank {
                return (.unchanged, try old.integer(0))
            }
            id = try old.integer(0)
            // A new static rank moves the item's scores for every word it holds, unseen by FTS5.
            if !writesText && oldRank != item.rank { TermLeaders.touchAll(statements.tokenOffers) }
            if writesText {
                // The old text's tokens, read and tokenized ahead, replay for FTS5's delete.
                defer { if let offers = statements.tokenOffers, prepared.replaced != nil { searchlight_withdraw_tokens(offers) } }
                if let offers = statements.tokenOffers, let replaced = prepared.replaced {
                    for (text, stream) in zip(replaced.texts, replaced.streams) { offer(stream, for: text, to: offers) }
                }
                try statements.removals.removeText(old, db: db)
            }
            // The row's value lengths come from the tokens (a no-op for an item prepared ahead).
            prepared.tokenize()
            // A place moved under the same text: FTS5 sees nothing, but the placed lists of its words hold
            // the old place (a row walked past there would be missing from a page where it now lies).
            if writesPlace && !writesText, let offers = statements.tokenOffers {
                for stream in prepared.tokens?.streams ?? [] {
                    guard let stream else { continue }
                    _ = stream.withUnsafeBufferPointer { searchlight_touch_stream(offers, $0.baseAddress, Int32($0.count)) }
                }
            }
            let update = statements.update
            try RowValues(prepared: prepared, storeID: storeID, location: location).bind(to: update, startingAt: 1, uriFirst: false)
            sqlite3_bind_int64(update.sqliteStatement, 11, id)
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
            if writesPlace { try statements.removals.remove(statements.removals.removePlace, id: id, db: db) }
            if writesAttributes { try statements.removals.remove(statements.removals.removeAttributes, id: id, db: db) }
        }
        // Bound with the C API, like the item's other rows: an attribute row per value is the bulk of a
        // filtered export's writes.
        let attribute = statements.insertAttribute.sqliteStatement
        for (name, values) in item.attributes where writesAttributes {
            for value in values where value.isFinite {
                sqlite3_reset(attribute)
                sqlite3_bind_int64(attribute, 1, id)
                SQLiteCall.bindText(attribute, 2, name)
                sqlite3_bind_int64(attribute, 3, Int64(value.kindCode))
                if let number = value.numberColumn { sqlite3_bind_double(attribute, 4, number) } else { sqlite3_bind_null(attribute, 4) }
                if let text = value.textColumn { SQLiteCall.bindText(attribute, 5, text) } else { sqlite3_bind_null(attribute, 5) }
                try step(statements.insertAttribute, db: db)
            }
        }
        // A new item without attributes holds nothing a stored column could say otherwise (its id, if reused,
        // was noted when its old item went).
        if writesAttributes && (!isNew || !item.attributes.isEmpty) { try statements.removals.noteAttributesChanged(id, db: db) }
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
    static func offerTokens(of prepared: PreparedItem, to offers: UnsafeMutableRawPointer?) {
        guard let offers, let streams = prepared.tokens?.streams else { return }
        for (text, stream) in zip([prepared.item.displayName, prepared.item.title, prepared.text, prepared.keywords], streams) {
            offer(stream, for: text, to: offers)
        }
    }

    /// Offers one text's token stream (nil: nothing to offer). An offer only saves work: one that cannot be
    /// made (no memory for its copy) leaves the tokenizer to run, with the same tokens.
    static func offer(_ stream: [UInt8]?, for text: String, to offers: UnsafeMutableRawPointer) {
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
    struct RowValues {
        var item: IndexedItem, storeID: Int64, location: Bool
        /// Computed by the caller: a new item is tokenized before its row is bound.
        var valueLengths: String, attributes: String, termVector: [UInt8]?

        init(prepared: PreparedItem, storeID: Int64, location: Bool) {
            item = prepared.item
            self.storeID = storeID
            self.location = location
            valueLengths = prepared.tokens?.valueLengths ?? ""
            attributes = prepared.attributes
            termVector = prepared.tokens?.termVector
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
            if let termVector { SQLiteCall.bindBlob(handle, next(), termVector) } else { sqlite3_bind_null(handle, next()) }
        }
    }

    /// Steps a statement that returns no row (or one, ignored) and resets it.
    static func step(_ statement: Statement, db: Database) throws {
        defer { sqlite3_reset(statement.sqliteStatement) }
        _ = try SQLiteCall.step(statement.sqliteStatement, db: db)
    }

    /// Removes an item; true when it existed.
    static func delete(uri: String, removals: RemovalStatements, db: Database) throws -> Bool {
        guard let old = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, display_name, title, text, keywords FROM items_content WHERE id = (SELECT id FROM items WHERE uri = ?)"),
                                         arguments: [uri]) else { return false }
        try removals.delete(old, db: db)
        return true
    }
}
