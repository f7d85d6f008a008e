import Foundation
import GRDB

extension SearchIndex {
    /// The schema, versioned by GRDB's migrator: migrations only ever move forward, and an index
    /// written by a newer version is refused rather than silently rewritten.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE stores (
                    id INTEGER PRIMARY KEY,
                    uuid TEXT NOT NULL UNIQUE,
                    path TEXT NOT NULL,
                    token INTEGER NOT NULL,
                    model_digest TEXT,
                    configuration_digest TEXT,
                    export_state TEXT,
                    updated_at REAL NOT NULL
                );
                -- What ranking and joins touch stays compact: many rows per page.
                CREATE TABLE items (
                    id INTEGER PRIMARY KEY,
                    uri TEXT NOT NULL UNIQUE,
                    store_id INTEGER NOT NULL,
                    entity TEXT NOT NULL,
                    display_name TEXT NOT NULL,
                    boost REAL NOT NULL,
                    latitude REAL,
                    longitude REAL,
                    date REAL,
                    rank REAL NOT NULL
                );
                -- The long text only snippets, dumps and FTS5 deletes read.
                CREATE TABLE item_texts (
                    id INTEGER PRIMARY KEY,
                    title TEXT NOT NULL,
                    text TEXT NOT NULL,
                    keywords TEXT NOT NULL
                );
                CREATE VIEW items_content AS
                    SELECT i.id AS id, i.display_name AS display_name, t.title AS title, t.text AS text, t.keywords AS keywords
                    FROM items i JOIN item_texts t ON t.id = i.id;
                CREATE VIRTUAL TABLE items_fts USING fts5(
                    display_name, title, text, keywords,
                    content='items_content', content_rowid='id', tokenize='\(SearchTokenizer.name)'
                );
                CREATE VIRTUAL TABLE items_geo USING rtree(id, min_lat, max_lat, min_lon, max_lon);
                CREATE VIRTUAL TABLE items_vocab USING fts5vocab(items_fts, 'row');
                INSERT INTO items_fts (items_fts, rank) VALUES ('automerge', 8);
                """)
        }
        migrator.registerMigration("v2") { db in
            // The timestamp of the transaction the token names: a store restored from a backup and saved
            // since reuses transaction numbers, and only the timestamp tells its history from the one indexed.
            try db.execute(sql: "ALTER TABLE stores ADD COLUMN token_timestamp REAL")
            // The configuration the items were built with, whole (not only its digest): an exporter started
            // without one reuses it instead of rebuilding with defaults.
            try db.execute(sql: "ALTER TABLE stores ADD COLUMN configuration TEXT")
            // Each entity's parent ("Child<TAB>Parent" lines): a search of Book finds GraphicNovels too, as a
            // Core Data fetch of Book does, and an abstract parent is a valid filter.
            try db.execute(sql: "ALTER TABLE stores ADD COLUMN entity_parents TEXT")
            // Items a rebuild has written again: the old items stay searchable until the rebuild ends, then
            // those it did not write again (objects gone meanwhile) are swept.
            try db.execute(sql: "CREATE TABLE rebuild_marks (id INTEGER PRIMARY KEY, store_id INTEGER NOT NULL)")
        }
        migrator.registerMigration("v3") { db in
            // The tokenizer indexes identifiers' parts. FTS5 deletes re-tokenize the stored text, so the
            // full-text index is rebuilt from the items in this transaction, before any write.
            try db.execute(sql: "INSERT INTO items_fts (items_fts) VALUES ('rebuild')")
        }
        migrator.registerMigration("v4") { db in
            // Relevance scores each value of a multi-valued field (one alternate name, one tag) on its own:
            // every item keeps its values' token counts ("3 1 2|1 1" for text|keywords) beside its rank,
            // in the row the ranking query joins anyway.
            try db.execute(sql: "ALTER TABLE items ADD COLUMN value_lengths TEXT NOT NULL DEFAULT ''")
            // In pages by id: the rows being read are never the ones being written.
            let update = try db.makeStatement(sql: "UPDATE items SET value_lengths = ? WHERE id = ?")
            var after: Int64 = 0
            while case let rows = try Row.fetchAll(db, sql: """
                SELECT t.id, t.text, t.keywords, i.display_name, t.title FROM item_texts t JOIN items i ON i.id = t.id
                WHERE t.id > ? ORDER BY t.id LIMIT 5000
                """, arguments: [after]),
                  let last = rows.last {
                for row in rows {
                    let lengths = SearchIndex.valueLengths(displayName: row[3], title: row[4],
                                                           text: (row[1] as String).components(separatedBy: fieldSeparator),
                                                           keywords: (row[2] as String).components(separatedBy: fieldSeparator))
                    try update.execute(arguments: [lengths, row[0] as Int64])
                }
                after = last[0]
            }
        }
        migrator.registerMigration("v5") { db in
            // Filter attributes (`population > 1000000`): one row per value, found by name and
            // value through an index; `items.attributes` keeps them whole, to tell an unchanged item.
            // Existing items have none until their configuration declares some (which rebuilds them).
            try db.execute(sql: """
                ALTER TABLE items ADD COLUMN attributes TEXT NOT NULL DEFAULT '';
                CREATE TABLE item_attributes (item_id INTEGER NOT NULL, name TEXT NOT NULL, kind INTEGER NOT NULL, number REAL, text TEXT);
                CREATE INDEX item_attributes_by_number ON item_attributes (name, number);
                CREATE INDEX item_attributes_by_text ON item_attributes (name, text);
                CREATE INDEX item_attributes_by_item ON item_attributes (item_id, name);
                """)
        }
        migrator.registerMigration("v6") { db in
            // Typo tolerance walks the index's terms as a trie: one B-tree seek per probe, where fts5vocab
            // would count a term's documents at every step. Filled from the vocabulary once; the writer
            // then adds each batch's new terms.
            try db.execute(sql: "CREATE TABLE item_terms (term TEXT PRIMARY KEY) WITHOUT ROWID")
            try TermDictionary.refresh(db)
        }
        migrator.registerMigration("v7") { db in
            // The relevance multiplier computed from the rank at write time: searchlight_rank reads the rank
            // itself since schema 4, so the column was written for every item and never read.
            try db.execute(sql: "ALTER TABLE items DROP COLUMN boost")
        }
        migrator.registerMigration("v8") { db in
            // What related objects show the items that depend on them (a country's name in its places'
            // text), as a digest per object: a catch-up re-indexes a country's places only when what they
            // show of it changed, not each time a place joins or leaves it.
            try db.execute(sql: """
                CREATE TABLE shown_values (uri TEXT PRIMARY KEY, store_id INTEGER NOT NULL, digest TEXT NOT NULL) WITHOUT ROWID;
                CREATE INDEX shown_values_by_store ON shown_values (store_id);
                """)
        }
        migrator.registerMigration("v9") { db in
            // Term leader lists: a frequent term's best rows, so that a one-word search scores a few dozen
            // rows instead of every row holding the word (see TermLeaders).
            try db.execute(sql: TermLeaders.schema)
            try db.execute(sql: TermLeaders.placesSchema)
            try db.execute(sql: TermLeaders.placedTailsSchema)
            try TermLeaders.refresh(db, listingPrefixes: false)
        }
        migrator.registerMigration("v10") { db in
            // Prefixes' lists beside the terms' (keys ending in `*`), registered for an idle follower to list;
            // the terms' lists stay. A build before this one would take such a key for a term and never
            // mark it stale, so the version changes and it refuses the file.
            try TermLeaders.registerPrefixes(db)
        }
        migrator.registerMigration("v11") { db in
            // A filter probes an item's attribute for every row FTS5 or the R-tree hands it: with the value
            // in the index the probe reads no table row (`city` in one country: p50 2.9 -> 1.9 ms at 940k).
            try db.execute(sql: """
                DROP INDEX item_attributes_by_item;
                \(SearchIndex.attributeItemIndex)
                """)
        }
        migrator.registerMigration("v12") { db in
            // Lists keep the URI of the row left off first: in an index without ranks (most stores) every
            // whole-value match of a word scores the same, and only the URI tells the page's last hit from
            // the rows left off. Lists listed before have none and prove as they did.
            try db.execute(sql: TermLeaders.boundarySchema)
        }
        migrator.registerMigration("v13") { db in
            // Phrases' lists beside the words' (keys of several tokens, `san juan`), watched through their
            // tokens. A build before this one would take such a key for a word and never mark it stale, so
            // the version changes and it refuses the file.
            try db.execute(sql: TermLeaders.placesSchema)
            try db.execute(sql: TermLeaders.placedTailsSchema)
            try TermLeaders.refreshPhrases(db)
        }
        migrator.registerMigration("v14") { db in
            // Term vectors: each item's tokens as FTS5 indexed them, in the row a place search reads anyway, so
            // that the places of a circle are checked and scored one by one instead of FTS5 merging every
            // term of a prefix (see term_vector.c). Made in pages by id from the stored texts.
            try db.execute(sql: "ALTER TABLE items ADD COLUMN term_vector BLOB")
            try fillTermVectors(db)
        }
        migrator.registerMigration("v15") { db in
            // Placed lists beside the leader lists: a listed word's, prefix's or phrase's best rows, far deeper,
            // with their places and scores, so that a search of it within a wide region stops early (see
            // TermLeaders+Places). Every list is listed again to have one.
            try db.execute(sql: TermLeaders.placesSchema)
            try db.execute(sql: TermLeaders.placedTailsSchema)
            try TermLeaders.listPlaces(db)
        }
        migrator.registerMigration("v16") { _ in
            // Schema 16 indexed the typo dictionary by first character and length; schema 17 replaced that index
            // with term_windows, so an older index is not given it on the way there.
        }
        migrator.registerMigration("v17") { db in
            // The typo dictionary's windows in chunks of terms: a window is a few hundred rows, where the index
            // of schema 16 gave one per term and SQLite's steps cost half of a typo-tolerant search.
            try db.execute(sql: "DROP INDEX IF EXISTS item_terms_by_window")
            try db.execute(sql: TermDictionary.windowSchema)
            try TermDictionary.rebuildWindows(db)
        }
        migrator.registerMigration("v18") { db in
            // Placed tails: the rows a placed list leaves off, without scores, so that a dense region holding
            // few of a frequent prefix's rows is read from them instead of scoring every place in it (see
            // TermLeaders+PlacedTails). The lists that leave rows off are listed again to have one.
            try db.execute(sql: TermLeaders.placedTailsSchema)
            try TermLeaders.listTails(db)
            // The (name, value) indexes cover a comparison's item ids: a filter driving a scan read each id's
            // table row (kind, item_id), in value order for a range, about 1.8 µs an id at 939,632 places.
            try db.execute(sql: """
                DROP INDEX item_attributes_by_number;
                DROP INDEX item_attributes_by_text;
                \(SearchIndex.attributeValueIndexes)
                """)
        }
        migrator.registerMigration("v19") { db in
            // The windows hold every term of the dictionary, not only those two-edit words reach: one-edit words
            // read theirs too, where their walk made a seek per probe.
            try TermDictionary.rebuildWindows(db)
        }
        migrator.registerMigration("v20") { db in
            // A related object whose change reaches more items than a page (a renamed country's places) has
            // them re-indexed a page at a time beside the history after it; how far that went, by the
            // object's URI, in the exporter's own words (see `IndexBatch.deferredDependents`).
            try db.execute(sql: """
                CREATE TABLE deferred_dependents (uri TEXT PRIMARY KEY, store_id INTEGER NOT NULL, progress TEXT NOT NULL) WITHOUT ROWID;
                CREATE INDEX deferred_dependents_by_store ON deferred_dependents (store_id);
                """)
        }
        migrator.registerMigration("v21") { db in
            // Facet columns stored by the writer (see `FacetColumn+Stored`): an index migrated has none until its
            // writer is next idle, or its next export ends; facets read the value indexes meanwhile.
            try db.execute(sql: FacetColumn.storageSchema)
        }
        return migrator
    }

    /// The indexes reading an attribute's items by value (schema 18): numbers and dates, then texts, each
    /// covering a comparison's item ids.
    package static let attributeValueIndexes = """
        CREATE INDEX item_attributes_by_number ON item_attributes (name, number, kind, item_id);
        CREATE INDEX item_attributes_by_text ON item_attributes (name, text, kind, item_id);
        """

    /// The index a filter probes an item's attribute rows through (schema 11), covering the value it compares.
    package static let attributeItemIndex = "CREATE INDEX item_attributes_by_item ON item_attributes (item_id, name, kind, number, text);"

    /// The newest schema version this build writes.
    static let schemaVersion = 21

    /// Writes every item's term vector from its stored texts, tokenized as FTS5 tokenized them (schema 14).
    ///
    /// Texts holding NUL (written before such texts were stored with U+FFFD) are mended first: a text read
    /// back through a Swift string ends at its NUL, so FTS5's delete of it missed the tokens after, and a
    /// vector made of it would miss them too. They are stored with U+FFFD and FTS5 is rebuilt from them,
    /// which also drops whatever such deletes left behind (only when some text holds a NUL).
    static func fillTermVectors(_ db: Database) throws {
        // Found and mended as bytes: SQL's replace() takes `char(0)` for an empty pattern.
        let holdingNUL = try Row.fetchAll(db, sql: """
            SELECT i.id, CAST(i.display_name AS BLOB), CAST(t.title AS BLOB), CAST(t.text AS BLOB), CAST(t.keywords AS BLOB)
            FROM items i JOIN item_texts t ON t.id = i.id
            WHERE instr(CAST(i.display_name AS BLOB), x'00') > 0 OR instr(CAST(t.title AS BLOB), x'00') > 0
                OR instr(CAST(t.text AS BLOB), x'00') > 0 OR instr(CAST(t.keywords AS BLOB), x'00') > 0
            """)
        for row in holdingNUL {
            let texts = (1...4).map { withoutNUL(String(decoding: (row[$0] as Data?) ?? Data(), as: UTF8.self)) }
            try db.execute(sql: "UPDATE items SET display_name = ? WHERE id = ?", arguments: [texts[0], row[0] as Int64])
            try db.execute(sql: "UPDATE item_texts SET title = ?, text = ?, keywords = ? WHERE id = ?", arguments: [texts[1], texts[2], texts[3], row[0] as Int64])
        }
        if !holdingNUL.isEmpty { try db.execute(sql: "INSERT INTO items_fts (items_fts) VALUES ('rebuild')") }
        let update = try db.makeStatement(sql: "UPDATE items SET term_vector = ? WHERE id = ?")
        var after: Int64 = 0
        // The texts as bytes: a string would end at a NUL that the mending above missed.
        while case let rows = try Row.fetchAll(db, sql: """
            SELECT id, CAST(display_name AS BLOB), CAST(title AS BLOB), CAST(text AS BLOB), CAST(keywords AS BLOB)
            FROM items_content WHERE id > ? ORDER BY id LIMIT 5000
            """, arguments: [after]),
              let last = rows.last {
            for row in rows {
                let columns: [String] = (1...4).map { String(decoding: (row[$0] as Data?) ?? Data(), as: UTF8.self) }
                let vector = SearchTokenizer.termVector(ofColumns: columns)
                try update.execute(arguments: [vector.map { Data($0) }, row[0] as Int64])
            }
            after = last[0]
        }
    }
}
