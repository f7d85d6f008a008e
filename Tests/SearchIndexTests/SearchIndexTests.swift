import Foundation
import GRDB
@testable import SearchIndex
import Testing
import SeededRandom

@Suite("Searching words in every language")
struct LanguageSearchTests {
    let index: SearchIndex

    init() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("index.searchindex").path
        index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [
            IndexFixtures.item(1, "横浜", text: ["横浜市の港"]),
            IndexFixtures.item(2, "Zürich", text: ["Die größte Stadt der Schweiz"]),
            IndexFixtures.item(3, "Hauptstraße", text: ["Eine Straße in Wien"]),
            IndexFixtures.item(4, "Tokyo", text: ["Capital of Japan"]),
            IndexFixtures.item(5, "เชียงใหม่", text: ["ฉันอาศัยอยู่ที่เชียงใหม่", "ยินดีต้อนรับสู่กรุงเทพมหานคร"]),
            IndexFixtures.item(6, "東京都渋谷区", text: ["Shibuya"]),
            IndexFixtures.item(7, "São Paulo", text: ["A maior cidade do Brasil"]),
            IndexFixtures.item(8, "Kyoto", text: ["Tokyo is far away"]),
        ], checkpoint: IndexFixtures.checkpoint(1)))
    }

    func uris(_ query: String) throws -> [String] {
        try index.search(SearchRequest(query: query)).hits.map(\.uri)
    }

    @Test("the words of the issue find what they should", arguments: [
        ("横浜", ["p1"]), ("zurich", ["p2"]), ("ZÜRICH", ["p2"]), ("strasse", ["p3"]), ("straße", ["p3"]),
        ("ＴＯＫＹＯ", ["p4", "p8"]), ("เชียงใหม่", ["p5"]), ("กรุงเทพมหานคร", ["p5"]), ("渋谷", ["p6"]),
        ("東京都", ["p6"]), ("sao paulo", ["p7"]), ("\"maior cidade\"", ["p7"]), ("cidade maior", ["p7"]),
        ("\"cidade maior\"", []), ("tok*", ["p4", "p8"]), ("zur*", ["p2"]), ("kyoto OR zurich", ["p2", "p8"]),
        ("tokyo -kyoto", ["p4"]), ("größte", ["p2"]),
        // No transliteration (ö is o, not oe), but one edit away from größte, folded "grosste": a typo match.
        ("groesste", ["p2"]),
    ])
    func finds(query: String, expected: [String]) throws {
        #expect(Set(try uris(query).map { String($0.split(separator: "/").last ?? "") }) == Set(expected), "\(query)")
    }

    @Test("display name ranks above text: Tokyo before the Kyoto that mentions Tokyo")
    func ranking() throws {
        #expect(try uris("tokyo").first?.hasSuffix("/p4") == true)
    }

    @Test("highlights land on the original characters")
    func highlights() throws {
        let hit = try #require(try index.search(SearchRequest(query: "zurich", snippets: true)).hits.first)
        #expect(hit.snippet?.contains("[Zürich]") == true)
        let japanese = try #require(try index.search(SearchRequest(query: "港", snippets: true)).hits.first)
        #expect(japanese.snippet?.contains("[港]") == true)
        let thai = try #require(try index.search(SearchRequest(query: "กรุงเทพมหานคร", snippets: true)).hits.first)
        #expect(thai.snippet?.contains("[กรุงเทพมหานคร]") == true)
        let street = try #require(try index.search(SearchRequest(query: "strasse", snippets: true)).hits.first)
        #expect(street.snippet?.contains("[Straße]") == true)
    }

    @Test("hostile queries return results or a clear error, never an SQLite error", arguments: [
        "\"unbalanced", "unbalanced\"", "\"\"", "OR", "AND", "NOT", "OR OR", "tokyo OR", "OR tokyo", "-", "--", "- tokyo",
        "NEAR(", "NEAR(tokyo kyoto)", "^tokyo", "*", "**", "tok**", "*tok", "title:tokyo", "{title}: tokyo", "tokyo + kyoto",
        "(tokyo", "tokyo)", "col:", ":", "\u{0}", "tokyo\u{0}kyoto", "'", "\\", "%", "\u{FFFD}", "-tokyo", "-tokyo -kyoto",
        String(repeating: "a", count: 100_000), String(repeating: "tokyo ", count: 20_000), String(repeating: "\"", count: 501),
    ])
    func hostile(query: String) {
        do {
            _ = try index.search(SearchRequest(query: query))
        } catch .invalidQuery(let reason) {
            #expect(!reason.isEmpty && !reason.lowercased().contains("sqlite") && !reason.contains("fts5"))
        } catch {
            Issue.record("\(query.prefix(40)): \(error)")
        }
    }

    @Test("invalid UTF-8 in stored text is indexed without harm")
    func invalidUTF8() throws {
        let bytes: [UInt8] = [0x41, 0xFF, 0xFE, 0x42, 0xC3]
        let text = String(decoding: bytes, as: UTF8.self)
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(99, "bad \(text) bytes")], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try uris("bytes").count == 1)
    }
}

@Suite("Batches, checkpoints and the index file")
struct BatchTests {
    let directory = IndexFixtures.temporaryDirectory()

    @Test("upserts are idempotent, deletes remove, the checkpoint travels with the batch")
    func batches() throws {
        let index = try SearchIndex(path: directory.appendingPathComponent("a.searchindex").path, mode: .readWrite(permissions: nil))
        let batch = IndexBatch(upserts: [IndexFixtures.item(1, "Lisbon", latitude: 38.7, longitude: -9.1), IndexFixtures.item(2, "Porto")],
                               checkpoint: IndexFixtures.checkpoint(5))
        #expect(try index.apply(batch) == BatchResult(inserted: 2, updated: 0, deleted: 0))
        // The same content again rewrites nothing; different content is an update.
        #expect(try index.apply(batch) == BatchResult(inserted: 0, updated: 0, deleted: 0, unchanged: 2))
        #expect(try index.dump().count == 2)
        #expect(try index.checkpoint(storeUUID: "STORE-A")?.token == 5)
        // Rename: old words gone, new words found.
        #expect(try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Lisboa", latitude: 38.7, longitude: -9.1)], checkpoint: IndexFixtures.checkpoint(6)))
                == BatchResult(updated: 1))
        // A change in any field counts, the place alone too.
        #expect(try index.apply(IndexBatch(upserts: [IndexFixtures.item(2, "Porto", latitude: 41.1, longitude: -8.6)], checkpoint: IndexFixtures.checkpoint(6)))
                == BatchResult(updated: 1))
        #expect(try index.apply(IndexBatch(upserts: [IndexFixtures.item(2, "Porto", rank: 5)], checkpoint: IndexFixtures.checkpoint(6))) == BatchResult(updated: 1))
        #expect(try index.search(SearchRequest(near: try Coordinate(latitude: 41.1, longitude: -8.6), radius: 10)).hits.isEmpty)
        #expect(try index.checkpoint(storeUUID: "STORE-A")?.token == 6)
        var lisbon = SearchRequest(query: "lisbon")
        lisbon.typoTolerance = false  // as typed: "lisboa" is one edit away
        #expect(try index.search(lisbon).hits.isEmpty)
        #expect(try index.search(SearchRequest(query: "lisboa")).hits.count == 1)
        #expect(try index.search(SearchRequest(near: try Coordinate(latitude: 38.7, longitude: -9.1), radius: 10)).hits.count == 1)
        #expect(try index.apply(IndexBatch(deletes: ["x-coredata://STORE-A/Place/p1", "x-coredata://STORE-A/Place/p404"],
                                           checkpoint: IndexFixtures.checkpoint(7))) == BatchResult(inserted: 0, updated: 0, deleted: 1))
        #expect(try index.search(SearchRequest(query: "lisboa")).hits.isEmpty)
        #expect(try index.search(SearchRequest(near: try Coordinate(latitude: 38.7, longitude: -9.1), radius: 10)).hits.isEmpty)
        #expect(try index.dump().map(\.uri) == ["x-coredata://STORE-A/Place/p2"])
        // Several stores share one index, each with its checkpoint; removing one leaves the other.
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Porto", store: "STORE-B")], checkpoint: IndexFixtures.checkpoint(1, store: "STORE-B")))
        #expect(try index.checkpoints().map(\.storeUUID) == ["STORE-A", "STORE-B"])
        #expect(try index.search(SearchRequest(query: "porto")).hits.count == 2)
        #expect(try index.removeStore(uuid: "STORE-A") == 1)
        #expect(try index.search(SearchRequest(query: "porto")).hits.map(\.uri) == ["x-coredata://STORE-B/Place/p1"])
        #expect(try index.checkpoints().map(\.storeUUID) == ["STORE-B"])
    }

    @Test("a name or attribute that changed only in its Unicode normalization is an update: stored, filtered and found as the new bytes")
    func normalizationOnly() throws {
        let index = try SearchIndex(path: directory.appendingPathComponent("nfd.searchindex").path, mode: .readWrite(permissions: nil))
        var item = IndexFixtures.item(1, "Caf\u{E9} Rouge")
        item.attributes = ["kind": [.string("caf\u{E9}")]]
        #expect(try index.apply(IndexBatch(upserts: [item], checkpoint: IndexFixtures.checkpoint(1))) == BatchResult(inserted: 1))
        // Canonically equal to the NFC text (Swift's == says so), not the same bytes.
        item.displayName = "Cafe\u{301} Rouge"
        item.attributes = ["kind": [.string("cafe\u{301}")]]
        #expect(item.displayName == "Caf\u{E9} Rouge")
        #expect(try index.apply(IndexBatch(upserts: [item], checkpoint: IndexFixtures.checkpoint(2))) == BatchResult(updated: 1))
        #expect(try index.dump().map { Array($0.displayName.utf8) } == [Array("Cafe\u{301} Rouge".utf8)])
        #expect(try index.apply(IndexBatch(upserts: [item], checkpoint: IndexFixtures.checkpoint(3))) == BatchResult(unchanged: 1))
        for (value, found) in [("cafe\u{301}", 1), ("caf\u{E9}", 0)] {
            var request = SearchRequest(query: nil)
            request.filter = "kind == '\(value)'"
            #expect(try index.search(request).hits.count == found, "kind == \(Array(value.unicodeScalars))")
        }
        #expect(try index.search(SearchRequest(query: "rouge")).hits.map(\.uri) == [item.uri])
    }

    @Test("texts are equal to the writer exactly when their bytes are: 20,000 random pairs, canonically equal ones included")
    func byteEquality() {
        var generator = SeededGenerator(state: 17)
        // Pieces whose NFC and NFD forms differ, a Hangul syllable and its jamo, and plain text.
        let pieces = ["a", "e", "\u{E9}", "e\u{301}", "\u{D55C}", "\u{1112}\u{1161}\u{11AB}", " ", "\u{1F1EB}\u{1F1F7}", "\u{0}", "z"]
        for _ in 0..<20_000 {
            let a = (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined()
            var b = Bool.random(using: &generator) ? a : (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined()
            if Bool.random(using: &generator) { b = b.decomposedStringWithCanonicalMapping }
            // A string cut from a longer one, as rows and slices make them.
            let c = String(("x" + b).dropFirst())
            #expect(BinaryCollation.equal(a, c) == (Array(a.utf8) == Array(c.utf8)), "\(Array(a.unicodeScalars)) / \(Array(c.unicodeScalars))")
        }
    }

    @Test("an index whose creation was killed before its schema committed is built on the next open, not refused")
    func interruptedCreation() throws {
        let path = directory.appendingPathComponent("interrupted.searchindex").path
        // What a kill between GRDB's bookkeeping commit and the first migration leaves.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)") }
        try queue.close()
        #expect(throws: SearchIndexError.self) { try SearchIndex(path: path, mode: .readOnly) }
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Porto")], checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try index.count(SearchRequest(query: "porto")) == 1)
        // A file with other tables is still not an index.
        let foreign = directory.appendingPathComponent("foreign.searchindex").path
        let other = try DatabaseQueue(path: foreign)
        try other.write { db in try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY)") }
        try other.close()
        #expect(throws: SearchIndexError.self) { try SearchIndex(path: foreign, mode: .readWrite(permissions: nil)) }
        // A new index is built aside and linked into place whole: nothing of the build is left behind.
        _ = try SearchIndex(path: directory.appendingPathComponent("fresh.searchindex").path, mode: .readWrite(permissions: nil))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".creating-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("removing a store: in bounded batches beside another store, all at once when it is the only one")
    func removeStore() throws {
        let index = try SearchIndex(path: directory.appendingPathComponent("r.searchindex").path, mode: .readWrite(permissions: nil))
        let names = ["Porto", "Lisboa", "Faro", "Braga", "Coimbra", "Evora", "Aveiro"]
        for store in ["STORE-A", "STORE-B"] {
            try index.apply(IndexBatch(upserts: names.indices.map { IndexFixtures.item($0 + 1, names[$0], latitude: 40, longitude: -8, store: store) },
                                       checkpoint: IndexFixtures.checkpoint(1, store: store)))
        }
        #expect(try index.removeStore(uuid: "STORE-A", batchSize: 2) == names.count)
        #expect(try index.dump().allSatisfy { $0.uri.hasPrefix("x-coredata://STORE-B/") } && index.dump().count == names.count)
        #expect(try index.count(SearchRequest(query: "porto")) == 1)
        #expect(try index.count(SearchRequest(near: try Coordinate(latitude: 40, longitude: -8), radius: 1_000)) == names.count)
        #expect(try index.checkpoints().map(\.storeUUID) == ["STORE-B"])
        #expect(try index.removeStore(uuid: "STORE-B") == names.count)
        #expect(try index.dump().isEmpty && index.checkpoints().isEmpty)
        #expect(try index.count(SearchRequest(query: "porto")) == 0)
        #expect(try index.count(SearchRequest(near: try Coordinate(latitude: 40, longitude: -8), radius: 1_000)) == 0)
        // The full-text index is consistent after delete-all: new items are found, old ones are not.
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Porto", store: "STORE-C")], checkpoint: IndexFixtures.checkpoint(1, store: "STORE-C")))
        #expect(try index.count(SearchRequest(query: "porto")) == 1 && index.count(SearchRequest(query: "faro")) == 0)
    }

    @Test("a new index takes the permissions it is given, never wider, and so do its WAL files")
    func permissions() throws {
        let path = directory.appendingPathComponent("private.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: 0o640))
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Oslo")], checkpoint: IndexFixtures.checkpoint(1)))
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            let mode = try FileManager.default.attributesOfItem(atPath: path + suffix)[.posixPermissions] as? Int
            #expect(mode == 0o640, "\(suffix)")
        }
    }

    @Test("a read-only open never creates, and refuses what is not an index")
    func opening() throws {
        let missing = directory.appendingPathComponent("missing.searchindex").path
        #expect(throws: SearchIndexError.indexNotFound(path: missing)) { try SearchIndex(path: missing, mode: .readOnly) }
        #expect(!FileManager.default.fileExists(atPath: missing))
        let other = directory.appendingPathComponent("other.sqlite").path
        let queue = try DatabaseQueue(path: other)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        try queue.close()
        #expect(throws: SearchIndexError.self) { try SearchIndex(path: other, mode: .readOnly) }
        #expect(throws: SearchIndexError.self) { try SearchIndex(path: other, mode: .readWrite(permissions: nil)) }
        let garbage = directory.appendingPathComponent("garbage.searchindex")
        try Data(repeating: 0x42, count: 4096).write(to: garbage)
        #expect(throws: SearchIndexError.self) { try SearchIndex(path: garbage.path, mode: .readOnly) }
    }
}
