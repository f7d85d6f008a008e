import CSearchTokenizer
import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing

/// Items prepared ahead (tokenized on another thread, the tokens offered to FTS5) must build exactly the
/// index that items written as they come build.
@Suite("Prepared items")
struct PreparedItemTests {
    /// Words from every script the tokenizer handles, identifiers, separators inside values, marks.
    static let words = ["Zürich", "zurich", "東京都", "渋谷区", "กรุงเทพมหานคร", "Αθήνα", "Москва", "DeviceMigrationState_FD0781A4",
                        "support@example.com", "HTTPServer", "l'Aquila", "São", "Paulo", "ﬁne", "ＡＢＣ", "x\u{1E}y", "a\u{1F}b",
                        "e\u{301}", "\u{301}mark", "", " ", "-", "42", "3.14", "Roma", "Rome", "Città", "eterna", "🇨🇭", "New", "York"]

    static func randomText(_ generator: inout SeededGenerator, words: Int) -> String {
        (0..<Int.random(in: 0...words, using: &generator)).map { _ in Self.words.randomElement(using: &generator) ?? "" }
            .joined(separator: [" ", ", ", "  ", "/"].randomElement(using: &generator) ?? " ")
    }

    static func randomItems(count: Int, seed: UInt64, prefix: String = "") -> [IndexedItem] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { key in
            IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: "Place", displayName: prefix + randomText(&generator, words: 3),
                        title: randomText(&generator, words: 2),
                        text: (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomText(&generator, words: 4) },
                        keywords: (0..<Int.random(in: 0...2, using: &generator)).map { _ in randomText(&generator, words: 1) },
                        latitude: Double.random(in: -90...90, using: &generator), longitude: Double.random(in: -180...180, using: &generator),
                        rank: Double(key), attributes: ["tag": [.string(randomText(&generator, words: 2)), .number(Double(key) / 3)]])
        }
    }

    /// Every token instance FTS5 holds (term, item, column, position), the rows the writer derived, and
    /// FTS5's own integrity check.
    static func contents(_ path: String) throws -> [String] {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try SearchTokenizer.register(on: db) }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.write { db in
            try db.execute(sql: "INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
            try db.execute(sql: "CREATE VIRTUAL TABLE temp.instances USING fts5vocab(main, items_fts, instance)")
            let instances = try String.fetchAll(db, sql: """
                SELECT v.term || ' ' || i.uri || ' ' || v.col || ' ' || v.offset FROM temp.instances v JOIN items i ON i.id = v.doc
                ORDER BY 1
                """)
            let rows = try String.fetchAll(db, sql: """
                SELECT i.uri || ' ' || i.value_lengths || ' ' || i.attributes || ' ' || t.text || ' ' || t.keywords
                FROM items i JOIN item_texts t ON t.id = i.id ORDER BY i.uri
                """)
            let terms = try String.fetchAll(db, sql: "SELECT term FROM item_terms ORDER BY term")
            return instances + rows + terms
        }
    }

    static func newIndex(_ name: String) throws -> SearchIndex {
        try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("\(name).searchindex").path, mode: .readWrite(permissions: nil))
    }

    @Test("prepared or not, inserts and rewrites build the same FTS5 index, value lengths, attributes and terms")
    func sameIndex() throws {
        let plain = try Self.newIndex("plain"), prepared = try Self.newIndex("prepared")
        let first = Self.randomItems(count: 300, seed: 11)
        // Half the items rewritten with other texts, some unchanged, some deleted.
        let second = Array(Self.randomItems(count: 150, seed: 12, prefix: "renamed ")) + first[150..<200]
        let deletes = first[200..<230].map(\.uri)
        try plain.apply(IndexBatch(upserts: first, checkpoint: IndexFixtures.checkpoint(1)))
        try prepared.apply(IndexBatch(prepared: first.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try Self.contents(plain.path) == Self.contents(prepared.path))
        let plainResult = try plain.apply(IndexBatch(upserts: second, deletes: deletes, checkpoint: IndexFixtures.checkpoint(2)))
        let preparedResult = try prepared.apply(IndexBatch(prepared: second.map(PreparedItem.init), deletes: deletes, checkpoint: IndexFixtures.checkpoint(2)))
        #expect(plainResult == preparedResult)
        #expect(plainResult.updated == 150 && plainResult.unchanged == 50 && plainResult.deleted == 30)
        let contents = try Self.contents(plain.path)
        #expect(contents == (try Self.contents(prepared.path)))
        #expect(contents.contains { $0.hasPrefix("renamed ") })
    }

    @Test("updates that change one part (text, place, attributes) and old texts tokenized ahead, current or stale, build the same index")
    func partialUpdatesAndReplacements() throws {
        let plain = try Self.newIndex("plain-partial"), ahead = try Self.newIndex("ahead-partial")
        let first = Self.randomItems(count: 240, seed: 21)
        for index in [plain, ahead] { try index.apply(IndexBatch(prepared: first.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1))) }
        // Each item changes one part: its text, its place, its filter attributes, its rank, or nothing.
        var generator = SeededGenerator(seed: 22)
        let second = first.enumerated().map { offset, item -> IndexedItem in
            var item = item
            switch offset % 5 {
            case 0: item.text = [Self.randomText(&generator, words: 5), "moved"]
            case 1: item.latitude = Double.random(in: -90...90, using: &generator)
            case 2: item.attributes = ["tag": [.string("other")]]
            case 3: item.rank += 1
            default: break
            }
            return item
        }
        var prepared = second.map(PreparedItem.init)
        try ahead.prepareReplacements(of: &prepared)
        #expect(prepared.allSatisfy { $0.replaced != nil })
        // Another writer's batch lands between the read ahead and the write: a third of the read texts are stale.
        let meanwhile = Array(second.prefix(80).map { item in var item = item; item.text = ["meanwhile"]; return item })
        for index in [plain, ahead] { try index.apply(IndexBatch(upserts: meanwhile, checkpoint: IndexFixtures.checkpoint(2))) }
        let plainResult = try plain.apply(IndexBatch(upserts: second, checkpoint: IndexFixtures.checkpoint(3)))
        let aheadResult = try ahead.apply(IndexBatch(prepared: prepared, checkpoint: IndexFixtures.checkpoint(3)))
        #expect(plainResult == aheadResult && plainResult.unchanged == 32 && plainResult.updated == 208, "\(plainResult)")
        #expect(try Self.contents(plain.path) == Self.contents(ahead.path))
        // Places and attributes, which the FTS5 contents above do not show, are the same too.
        for index in [plain, ahead] {
            #expect(try index.count(SearchRequest(query: "moved")) == 48)
            #expect(try index.count(SearchRequest(near: try Coordinate(latitude: 0, longitude: 0), radius: 20_000_000)) == 240)
            // The R-tree holds each moved item at its new place.
            for item in second.enumerated().filter({ $0.offset % 5 == 1 }).map(\.element) {
                let near = try Coordinate(latitude: item.latitude ?? 0, longitude: item.longitude ?? 0)
                #expect(try index.search(SearchRequest(near: near, radius: 1)).hits.map(\.uri) == [item.uri])
            }
        }
        func tagged(_ index: SearchIndex) throws -> [String] {
            var request = SearchRequest(limit: 300)
            request.filter = "tag == 'other'"
            return try index.search(request).hits.map(\.uri).sorted()
        }
        #expect(try tagged(plain).count == 48 && tagged(plain) == tagged(ahead))
    }

    @Test("an old text's tokens made from the values it shares with the new text equal tokenizing it whole (5,000 random edits)")
    func sharedValueStreams() throws {
        var generator = SeededGenerator(seed: 31)
        var spliced = 0, joined = 0
        // Values that begin with a zero-width joiner before a pictograph that is a letter: after the separator
        // ICU joins them into one word with it (see documentStream(of:sharingValuesWith:stream:)).
        let joiners = ["\u{200D}ℹnfo", "\u{200D}Ⓜ", "a\u{200D}🅰b", "\u{200D}🅰"]
        func value() -> String {
            Int.random(in: 0..<20, using: &generator) == 0 ? joiners.randomElement(using: &generator) ?? "" : Self.randomText(&generator, words: 3)
        }
        for _ in 0..<5_000 {
            let new = (0..<Int.random(in: 0...6, using: &generator)).map { _ in value() }
            var old = new
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: if !old.isEmpty { old[Int.random(in: 0..<old.count, using: &generator)] = value() }
            case 1: old.insert(value(), at: Int.random(in: 0...old.count, using: &generator))
            case 2: if !old.isEmpty { old.remove(at: Int.random(in: 0..<old.count, using: &generator)) }
            default: old.shuffle(using: &generator)
            }
            let oldText = SearchIndex.joined(old), newText = SearchIndex.joined(new)
            let newStream = try #require(SearchTokenizer.documentStream(of: newText))
            let made = SearchTokenizer.documentStream(of: oldText, sharingValuesWith: newText, stream: newStream)
            // A zero-width joiner after the separator joins words across it: those texts are tokenized whole.
            let joiner = (oldText + newText).unicodeScalars.contains("\u{200D}")
            if made != nil { spliced += 1 }
            if joiner { joined += 1 }
            #expect((made == nil) == joiner, "\(old) from \(new)")
            #expect(made == nil || made == SearchTokenizer.documentStream(of: oldText), "\(old) from \(new)")
        }
        #expect(spliced + joined == 5_000 && joined > 100)
    }

    @Test("a country renamed: its places' old texts, tokenized from their new ones, delete exactly what FTS5 holds")
    func renamedRelatedValue() throws {
        let plain = try Self.newIndex("plain-renamed"), ahead = try Self.newIndex("ahead-renamed")
        var generator = SeededGenerator(seed: 32)
        let first = Self.randomItems(count: 200, seed: 33).map { item in
            var item = item
            item.text = [Self.randomText(&generator, words: 2)] + item.text + ["Helvetia Confoederatio"]
            return item
        }
        for index in [plain, ahead] { try index.apply(IndexBatch(prepared: first.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1))) }
        let second = first.map { item in
            var item = item
            item.text[item.text.count - 1] = "Schweiz Suisse 🇨🇭"
            return item
        }
        var prepared = second.map(PreparedItem.init)
        try ahead.prepareReplacements(of: &prepared)
        try plain.apply(IndexBatch(upserts: second, checkpoint: IndexFixtures.checkpoint(2)))
        let result = try ahead.apply(IndexBatch(prepared: prepared, checkpoint: IndexFixtures.checkpoint(2)))
        #expect(result.updated == 200)
        #expect(try Self.contents(plain.path) == Self.contents(ahead.path))
        #expect(try ahead.count(SearchRequest(query: "helvetia")) == 0 && ahead.count(SearchRequest(query: "suisse")) == 200)
    }

    @Test("a batch's upserts changed after preparing are written as changed, not as prepared")
    func changedAfterPreparing() throws {
        let index = try Self.newIndex("changed")
        var batch = IndexBatch(prepared: [PreparedItem(IndexFixtures.item(1, "before"))], checkpoint: IndexFixtures.checkpoint(1))
        batch.upserts[0].displayName = "after"
        batch.upserts[0].title = "after"
        try index.apply(batch)
        #expect(try index.search(SearchRequest(query: "after")).hits.count == 1)
        #expect(try index.search(SearchRequest(query: "before")).hits.isEmpty)
    }

    @Test("the tokenizer replays an offered stream only for the exact text it was made from, once")
    func offers() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try SearchTokenizer.register(on: db)
            try db.execute(sql: """
                CREATE VIRTUAL TABLE t USING fts5(body, tokenize='searchlight');
                CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row');
                """)
            let offers = try #require(searchlight_token_offers(db.sqliteConnection))
            // A stream made from other text, offered for "alpha": replaying it proves the offer was taken.
            let stream = try #require(SearchTokenizer.documentStream(of: "gamma"))
            let status = stream.withUnsafeBufferPointer { searchlight_offer_tokens(offers, "alpha", 5, $0.baseAddress, Int32($0.count)) }
            #expect(status == 0)
            try db.execute(sql: "INSERT INTO t (body) VALUES ('beta')")   // not the offered text: tokenized
            try db.execute(sql: "INSERT INTO t (body) VALUES ('alpha')")  // the offered text: replayed
            try db.execute(sql: "INSERT INTO t (body) VALUES ('alpha')")  // the offer is used up: tokenized
            searchlight_withdraw_tokens(offers)
            #expect(try String.fetchAll(db, sql: "SELECT term || ':' || doc FROM v ORDER BY term") == ["alpha:1", "beta:1", "gamma:1"])
        }
    }

    @Test("value lengths count the positions FTS5 gives each value of the joined text")
    func valueLengths() throws {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<300 {
            let values = (0..<Int.random(in: 1...5, using: &generator)).map { _ in Self.randomText(&generator, words: 4) }
            let joined = SearchIndex.joined(values)
            let stream = try #require(SearchTokenizer.documentStream(of: joined))
            var starts: [Int32] = [], offset = 0
            for value in values {
                starts.append(Int32(offset))
                offset += value.utf8.count + 1
            }
            let positions = try #require(SearchTokenizer.valuePositions(in: stream, valueStarts: starts))
            // All the text's positions, each value's own where no mark hangs on the separator before it.
            #expect(positions.reduce(0, +) == SearchTokenizer.tokens(in: joined).count)
            for (value, count) in zip(values, positions) where !(value.unicodeScalars.first?.properties.generalCategory == .nonspacingMark) {
                #expect(count == SearchTokenizer.tokens(in: value.replacingOccurrences(of: "\u{1F}", with: " ")).count, "\(values)")
            }
        }
    }

    @Test("batches pulled into one transaction commit together, the last checkpoint with them, or not at all")
    func batchesInOneTransaction() throws {
        struct Interrupted: Error {}
        let index = try Self.newIndex("pulled")
        let items = Self.randomItems(count: 30, seed: 3)
        var pulled = 0
        #expect(throws: SearchIndexError.self) {
            try index.apply(batchesFrom: {
                pulled += 1
                if pulled == 3 { throw Interrupted() }
                return IndexBatch(prepared: items[(pulled - 1) * 10..<pulled * 10].map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(Int64(pulled)))
            })
        }
        #expect(try index.checkpoints().isEmpty)
        #expect(try index.dump().isEmpty)
        pulled = 0
        let result = try index.apply(batchesFrom: {
            pulled += 1
            return pulled > 3 ? nil : IndexBatch(prepared: items[(pulled - 1) * 10..<pulled * 10].map(PreparedItem.init),
                                                  checkpoint: IndexFixtures.checkpoint(Int64(pulled)))
        })
        #expect(result.inserted == 30)
        #expect(try index.checkpoint(storeUUID: "STORE-A")?.token == 3)
    }

    @Test("column sizes read from value lengths score exactly as FTS5's own sizes (items of the first format)")
    func sizesFromValueLengths() throws {
        let index = try Self.newIndex("sizes")
        let items = Self.randomItems(count: 400, seed: 21)
        try index.apply(IndexBatch(prepared: items.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        let queries = ["zurich", "roma", "new york", "tokyo*", "state", "example", "eterna OR città", "\"sao paulo\"", "zurihc", "athens"]
        func answers() throws -> [[String]] {
            try queries.map { query in
                try index.search(SearchRequest(query: query, limit: 50)).hits.map { "\($0.uri) \($0.score)" }
            }
        }
        let sized = try answers()
        #expect(sized.contains { !$0.isEmpty })
        // The first format: no display name and title section; the ranking then asks FTS5 for every size.
        var configuration = Configuration()
        configuration.prepareDatabase { db in try SearchTokenizer.register(on: db) }
        let queue = try DatabaseQueue(path: index.path, configuration: configuration)
        try queue.write { db in
            let rewritten = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items WHERE value_lengths LIKE '%|%|%'")
            #expect(rewritten == items.count)
            try db.execute(sql: "UPDATE items SET value_lengths = substr(value_lengths, instr(value_lengths, '|') + 1)")
        }
        try queue.close()
        #expect(try answers() == sized)
        // A hostile index's sizes (two billion tokens) are not trusted: the same rows are found, nothing is
        // allocated for them.
        func found() throws -> [[String]] { try queries.map { try index.search(SearchRequest(query: $0, limit: 1_000)).hits.map(\.uri).sorted() } }
        let before = try found()
        let hostile = try DatabaseQueue(path: index.path, configuration: configuration)
        try hostile.write { db in try db.execute(sql: "UPDATE items SET value_lengths = '2147483647 0|0|0'") }
        try hostile.close()
        #expect(try found() == before)
    }
}
