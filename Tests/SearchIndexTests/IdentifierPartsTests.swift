import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing

/// Identifiers people type by their parts: `DeviceMigrationState_FD0781A4` is found by
/// `DeviceMigrationState`, `migration` or `fd0781a4`, and still by the whole.
@Suite("Identifier parts")
struct IdentifierPartsTests {
    func indexed(_ text: String) -> [String] {
        SearchTokenizer.tokens(in: text, withParts: true).map { ($0.isPart ? "+" : "") + $0.text }
    }

    @Test("documents carry each identifier's parts after it, colocated; queries are words as typed", arguments: [
        ("DeviceMigrationState_FD0781A4", ["devicemigrationstate_fd0781a4", "+devicemigrationstate", "+device", "+migration", "+state", "+fd0781a4"]),
        ("example.com", ["example.com", "+example", "+com"]),
        ("support@example.com", ["support@example.com", "+support", "+example", "+com"]),
        ("O'Brien https://example.com/a_b", ["o'brien", "+o", "+brien", "https", "example.com", "+example", "+com", "a_b", "+a", "+b"]),
        ("HTTPServerError", ["httpservererror", "+http", "+server", "+error"]),
        ("iPhone", ["iphone", "+i", "+phone"]),
        ("snake_case_name", ["snake_case_name", "+snake", "+case", "+name"]),
        ("Zürich Straße", ["zurich", "strasse"]),
        ("ÄrgerÜber", ["argeruber", "+arger", "+uber"]),
        ("FD0781A4 A4 ABC", ["fd0781a4", "a4", "abc"]),
        ("_x__y_", ["_x__y_", "+x", "+y"]),
        ("横浜市", ["横浜", "市"]),
    ])
    func parts(text: String, expected: [String]) {
        #expect(indexed(text) == expected)
        #expect(SearchTokenizer.tokens(in: text).map(\.text) == expected.filter { !$0.hasPrefix("+") })
    }

    @Test("10,000 random identifiers: parts lie inside their word, each word's parts follow it, a word is never a part")
    func randomIdentifiers() {
        var generator = SeededGenerator(seed: 31)
        let alphabet = Array("aZbYé_._-09 ÄxQ\u{0301}ß横".unicodeScalars)
        for _ in 0..<10_000 {
            let text = String(String.UnicodeScalarView((0..<Int.random(in: 0...20, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }))
            let tokens = SearchTokenizer.tokens(in: text, withParts: true)
            #expect(tokens.first?.isPart != true, "\(text)")
            var word: Range<Int>?
            for token in tokens {
                if token.isPart {
                    #expect(word.map { $0.contains(token.range.lowerBound) && token.range.upperBound <= $0.upperBound } == true, "\(text)")
                } else {
                    word = token.range
                }
                #expect(!token.text.isEmpty)
            }
            #expect(tokens.filter { !$0.isPart }.map(\.text) == SearchTokenizer.tokens(in: text).map(\.text), "\(text)")
        }
    }

    static func index() throws -> SearchIndex {
        try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("parts.searchindex").path, mode: .readWrite(permissions: nil))
    }

    /// FTS5's own check of its index against the items it was built from (the content table too).
    static func checkFullText(_ path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try SearchTokenizer.register(on: db) }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in try db.execute(sql: "INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)") }
        try queue.close()
    }

    static func uris(_ index: SearchIndex, _ query: String) throws -> [String] {
        try index.search(SearchRequest(query: query)).hits.map(\.uri).sorted()
    }

    @Test("an indexed identifier is found by each part and by the whole; rewrites and deletes keep FTS5 consistent")
    func search() throws {
        let index = try Self.index()
        try index.apply(IndexBatch(upserts: [
            IndexFixtures.item(1, "DeviceMigrationState_FD0781A4"),
            IndexFixtures.item(2, "Device state", text: ["migration notes"]),
            IndexFixtures.item(3, "mail", text: ["support@example.com"]),
        ], checkpoint: IndexFixtures.checkpoint(1)))
        let one = ["x-coredata://STORE-A/Place/p1"]
        #expect(try Self.uris(index, "DeviceMigrationState") == one)
        #expect(try Self.uris(index, "devicemigrationstate_fd0781a4") == one)
        #expect(try Self.uris(index, "fd0781a4") == one)
        #expect(try Self.uris(index, "DeviceMigr*") == one)
        #expect(try Self.uris(index, "migration") == ["x-coredata://STORE-A/Place/p1", "x-coredata://STORE-A/Place/p2"])
        #expect(try Self.uris(index, "example") == ["x-coredata://STORE-A/Place/p3"])
        #expect(try Self.uris(index, "state").count == 2) // a part and a word alike
        // Rewritten and deleted, the parts go with the words: FTS5's own check agrees with the content.
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "OtherName_X1")], deletes: ["x-coredata://STORE-A/Place/p3"], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.uris(index, "DeviceMigrationState").isEmpty && (try Self.uris(index, "example")).isEmpty)
        #expect(try Self.uris(index, "other") == one)
        try Self.checkFullText(index.path)
    }

    @Test("a schema-2 index is upgraded by the exporter: parts indexed, value lengths computed, attribute tables added (schemas 3 to 5)")
    func migration() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("v2.searchindex").path
        // A schema-2 index as that version wrote it: its tables, two items, four full-text columns.
        var configuration = Configuration()
        configuration.prepareDatabase { db in try SearchTokenizer.register(on: db) }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try SearchIndex.migrator.migrate(queue, upTo: "v2")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO stores (id, uuid, path, token, updated_at) VALUES (1, 'STORE-A', '/tmp/a.sqlite', 1, 0);
                INSERT INTO items (id, uri, store_id, entity, display_name, boost, rank) VALUES
                    (1, 'x-coredata://STORE-A/Place/p1', 1, 'Place', 'DeviceMigrationState_FD0781A4', 1, 0),
                    (2, 'x-coredata://STORE-A/Place/p2', 1, 'Place', 'Roma', 1, 10);
                INSERT INTO item_texts (id, title, text, keywords) VALUES (1, '', '', ''), (2, '', 'Rome\u{1F}Città eterna', 'IT');
                INSERT INTO items_fts (items_fts) VALUES ('rebuild');
                PRAGMA user_version = 2;
                """)
        }
        try queue.close()
        // A reader asks for the upgrade (the ranking reads what schema 4 adds); the exporter does it.
        #expect(throws: SearchIndexError.needsUpgrade(path: path)) { try SearchIndex(path: path, mode: .readOnly) }
        let upgraded = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        #expect(try Self.uris(upgraded, "migration") == ["x-coredata://STORE-A/Place/p1"])
        #expect(try Self.uris(upgraded, "eterna") == ["x-coredata://STORE-A/Place/p2"])
        let lengths = try DatabaseQueue(path: path, configuration: configuration).read { db in
            try String.fetchAll(db, sql: "SELECT value_lengths FROM items ORDER BY id")
        }
        #expect(lengths == ["1 0||", "1 0|1 2|1"])
        try upgraded.apply(IndexBatch(deletes: ["x-coredata://STORE-A/Place/p2"], checkpoint: IndexFixtures.checkpoint(2)))
        try Self.checkFullText(path)
    }
}
