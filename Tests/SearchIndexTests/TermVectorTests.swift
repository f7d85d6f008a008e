import CSearchTokenizer
import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing
import TestScratch

/// Term vectors (`items.term_vector`): a place search that checks and scores each place of its region from
/// the vector must answer exactly as FTS5 answers, hits and scores, on every query shape.
@Suite("Term vectors")
struct TermVectorTests {
    /// Words that exercise what FTS5 does with positions: identifiers and their parts (colocated), the same
    /// part twice at one position (`a.a.a`), camelCase, a prefix's terms at one position, scripts ICU segments.
    static let vocabulary = ["san", "santa", "sanjuan", "san_juan", "SanJuan", "a.a.a", "ab.ab.ac", "x_y", "new", "york", "New_York",
                             "port", "porto", "portland", "lake", "river", "São", "straße", "ǅemal", "ﬁsh", "東京都", "juan", "Juana", "sant",
                             "saint", "o'brien", "e-mail", "deviceMigration", "HTTPServer", "sanͺjuan", "river.river", "a"]

    static func items(count: Int, seed: UInt64) -> [IndexedItem] {
        var generator = SeededGenerator(seed: seed)
        func phrase(_ words: ClosedRange<Int>) -> String {
            (0..<Int.random(in: words, using: &generator)).map { _ in vocabulary.randomElement(using: &generator) ?? "" }.joined(separator: " ")
        }
        return (0..<count).map { key in
            IndexedItem(uri: "x-coredata://VECTORS/Place/p\(key)", entity: key % 4 == 0 ? "Lake" : "Town", displayName: phrase(1...3),
                        title: key % 3 == 0 ? phrase(1...2) : "", text: (0..<Int.random(in: 0...3, using: &generator)).map { _ in phrase(1...3) },
                        keywords: key % 2 == 0 ? [phrase(1...1)] : [],
                        latitude: Double.random(in: 40...42, using: &generator), longitude: Double.random(in: 10...12, using: &generator),
                        rank: [0, 3, 700, 40_000].randomElement(using: &generator) ?? 0)
        }
    }

    /// An index of the items with lists of every word, prefix and phrase of 50 rows or more.
    static func newIndex(_ name: String, items: [IndexedItem]) throws -> SearchIndex {
        try TypoTiersTests.newIndex(name, items: items, minimumDocuments: 50, listingPrefixes: true)
    }

    /// Queries of every shape: words, prefixes (one covering a part and its word at one position, and `a*`
    /// over `a.a.a`), phrases across parts, OR, exclusions, typos.
    static let queries = ["san", "san*", "a*", "a", "\"a a\"", "ab*", "juan", "\"san juan\"", "\"new york\"", "new york", "york*", "port* -lake",
                          "lake OR river", "\"san juan\"*", "sao", "strasse", "fish", "東京", "sanjuan", "sanjuab", "portlnd", "obrien", "o'brien",
                          "device", "migration", "server*", "x*", "river", "\"river river\"", "santa OR saint -new", "s*", "j* n*", "dzemal"]

    @Test("every query's page from the vectors equals FTS5's, hits and scores, lists on and off")
    func vectorsScoreAsFTS5() throws {
        let index = try Self.newIndex("vectors", items: Self.items(count: 1_500, seed: 31))
        let center = try Coordinate(latitude: 41, longitude: 11)
        var compared = 0
        for query in Self.queries {
            for (radius, limit) in [(60_000.0, 20), (300_000.0, 5), (300_000.0, 2_000)] {
                for lists in [true, false] {
                    var request = SearchRequest(query: query, near: center, radius: radius, limit: limit)
                    request.usesTermLeaders = lists
                    request.forcedPlan = .intersection
                    let fts5 = try index.search(request)
                    request.forcedPlan = .placeThenText
                    let vectors = try index.search(request)
                    // Past 16 rows its vectors cannot tell (`a*` over `a.a.a`), the search runs FTS5 once instead.
                    #expect(vectors.plan == .placeThenText || vectors.plan == .intersection)
                    #expect(vectors.hits.map(\.uri) == fts5.hits.map(\.uri), "\(query) \(radius) \(limit)")
                    #expect(vectors.hits.map(\.score) == fts5.hits.map(\.score), "\(query) \(radius) \(limit)")
                    #expect(vectors.hits.map(\.typos) == fts5.hits.map(\.typos), "\(query)")
                    compared += vectors.hits.count
                }
            }
        }
        #expect(compared > 10_000)
    }

    @Test("a row whose vector cannot tell (none, damaged, a prefix's term twice at one position) is scored by FTS5")
    func undecidableRowsAskFTS5() throws {
        let index = try Self.newIndex("vectors-fallback", items: Self.items(count: 600, seed: 32))
        let center = try Coordinate(latitude: 41, longitude: 11)
        // Some rows without a vector, some with bytes that are no vector.
        // Fewer than the 16 rows a query asks FTS5 about one by one.
        try index.write { db in
            try db.execute(sql: "UPDATE items SET term_vector = NULL WHERE id % 101 = 0")
            try db.execute(sql: "UPDATE items SET term_vector = X'02FF' WHERE id % 103 = 0")
            try db.execute(sql: "UPDATE items SET term_vector = substr(term_vector, 1, length(term_vector) - 1) WHERE id % 107 = 0")
        }
        func expectSameAnswers(_ context: String, plan: SearchPlan) throws {
            for query in ["san*", "river", "\"san juan\"", "lake OR river", "juan"] {
                var request = SearchRequest(query: query, near: center, radius: 300_000, limit: 500)
                request.forcedPlan = .intersection
                let fts5 = try index.search(request)
                request.forcedPlan = .placeThenText
                let vectors = try index.search(request)
                #expect(vectors.plan == plan, "\(context) \(query)")
                #expect(vectors.hits.map(\.uri) == fts5.hits.map(\.uri), "\(context) \(query)")
                #expect(vectors.hits.map(\.score) == fts5.hits.map(\.score), "\(context) \(query)")
                #expect(!vectors.hits.isEmpty, "\(context) \(query)")
            }
        }
        try expectSameAnswers("a few rows without vectors", plan: .placeThenText)
        // Every row without one: past 16, the search runs FTS5 once, with the same answers.
        try index.write { db in try db.execute(sql: "UPDATE items SET term_vector = NULL") }
        try expectSameAnswers("no vectors", plan: .intersection)
        // `a*` over `a.a.a`: the term `a` twice at one position; FTS5 decides how often the prefix counts it.
        let stream = SearchTokenizer.documentStream(of: "a.a.a")
        let vector = try #require(SearchTokenizer.termVector(streams: [stream, [], [], []]))
        let query = try #require(Self.query(phrases: [(["a"], true, 0)]))
        defer { searchlight_vector_query_free(query) }
        var score = 0.0
        #expect(vector.withUnsafeBufferPointer { searchlight_vector_query_score(query, $0.baseAddress, Int32($0.count), "1 0||", 0, &score) } == 2)
    }

    /// A vector query of phrases (tokens, prefix, group) with made-up statistics.
    static func query(phrases: [(tokens: [String], isPrefix: Bool, group: Int32)]) -> OpaquePointer? {
        let sizes = phrases.map { Int32($0.tokens.count) }, documents = phrases.map { _ in 10.0 }
        let scorer = searchlight_scorer_create(Int32(phrases.count), sizes, documents, 1_000, [2, 1, 5, 1], nil)
        guard let query = searchlight_vector_query_create(scorer, SearchIndex.columnWeights, nil, nil, nil) else { return nil }
        for phrase in phrases {
            let status = SearchTokenizer.withPointers(to: phrase.tokens.map { Array($0.utf8) }) { pointers, lengths in
                searchlight_vector_query_add_phrase(query, phrase.group, phrase.isPrefix ? 1 : 0, Int32(phrase.tokens.count), pointers, lengths)
            }
            guard status == 0 else { searchlight_vector_query_free(query); return nil }
        }
        return query
    }

    @Test("vectors follow every write: inserts, renames, moves, rank changes, deletes")
    func vectorsFollowWrites() throws {
        var items = Self.items(count: 400, seed: 33)
        let index = try Self.newIndex("vectors-writes", items: items)
        var generator = SeededGenerator(seed: 34)
        for round in 0..<4 {
            var upserts: [IndexedItem] = []
            for _ in 0..<60 {
                let key = Int.random(in: 0..<items.count, using: &generator)
                var item = items[key]
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: item.displayName = Self.vocabulary.randomElement(using: &generator) ?? "x"
                case 1: item.text = [Self.vocabulary.randomElement(using: &generator) ?? "x"]
                default: item.rank = Double(round * 100)
                }
                items[key] = item
                upserts.append(item)
            }
            let deleted = (0..<10).map { _ in items[Int.random(in: 0..<items.count, using: &generator)].uri }
            try index.apply(IndexBatch(upserts: upserts, deletes: deleted, checkpoint: IndexFixtures.checkpoint(Int64(round + 2))))
            items.removeAll { deleted.contains($0.uri) }
            // Every stored vector is the one its stored texts make.
            try index.read { db in
                for row in try Row.fetchAll(db, sql: "SELECT i.term_vector, i.display_name, t.title, t.text, t.keywords FROM items i JOIN item_texts t ON t.id = i.id") {
                    let columns: [String] = [row[1] as String, row[2] as String, row[3] as String, row[4] as String]
                    let expected = SearchTokenizer.termVector(ofColumns: columns)
                    #expect((row[0] as Data?).map { [UInt8]($0) } == expected)
                }
            }
        }
    }

    @Test("a region without a typo neighbour of a word answers without expanding it, as expanding would")
    func typoNeighboursInARegion() throws {
        let index = try Self.newIndex("vectors-typos", items: Self.items(count: 800, seed: 35))
        var generator = SeededGenerator(seed: 36)
        var skipped = 0, expanded = 0
        for query in ["sanjuab", "portlnd", "strase", "riverx", "sanjuan", "portlandd", "deviceMigratio", "jaun", "saintt*", "lakke OR portlnd"] {
            for _ in 0..<6 {
                let center = try Coordinate(latitude: Double.random(in: 39.5...42.5, using: &generator), longitude: Double.random(in: 9.5...12.5, using: &generator))
                let radius: Double = [2_000.0, 15_000.0, 60_000.0].randomElement(using: &generator) ?? 2_000
                // By relevance the search may skip the expansion; by distance, unpaged, it always expands.
                let relevance = try index.search(SearchRequest(query: query, near: center, radius: radius, limit: 5_000))
                let distance = try index.search(SearchRequest(query: query, near: center, radius: radius, sort: .distance, limit: 5_000))
                let pairs = { (hits: [SearchHit]) in Set(hits.map { "\($0.uri) \($0.score) \($0.typos)" }) }
                #expect(pairs(relevance.hits) == pairs(distance.hits), "\(query) \(center) \(radius)")
                try index.read { db in
                    var search = Search(db: db, request: SearchRequest(query: query, near: center, radius: radius, limit: 5_000),
                                        parsed: try QueryParser.parse(query))
                    if let plan = TypoPlan(try QueryParser.parse(query)) {
                        if try search.regionMayHoldTypoNeighbours(of: plan) { expanded += 1 } else { skipped += 1 }
                    }
                }
            }
        }
        #expect(skipped > 10 && expanded > 10, "\(skipped) skipped, \(expanded) expanded")
    }

    @Test("a search that skipped its typo walk suggests what expanding would have: nothing for a word found as a typo elsewhere")
    func suggestionsAsExpanded() throws {
        let index = try Self.newIndex("vectors-suggestions", items: Self.items(count: 500, seed: 39))
        let nowhere = try Coordinate(latitude: -60, longitude: -150)  // no place within reach: no neighbour either
        var compared = 0
        for query in ["sanjuab", "portlnd", "deviceMigratio", "zzzzzzzz", "riverx lake", "sanjuab portlnd"] {
            let relevance = try index.search(SearchRequest(query: query, near: nowhere, radius: 50_000))
            let distance = try index.search(SearchRequest(query: query, near: nowhere, radius: 50_000, sort: .distance))
            #expect(relevance.hits.isEmpty && distance.hits.isEmpty)
            #expect(relevance.suggestion == distance.suggestion, "\(query)")
            compared += relevance.suggestion == nil ? 0 : 1
        }
        // `sanjuab` is `sanjuan` with one typo: found as such elsewhere, so not corrected; `zzzzzzzz` has nothing near.
        #expect(try index.search(SearchRequest(query: "sanjuab", near: nowhere, radius: 50_000)).suggestion == nil)
    }

    @Test("typo expansions are single tokens as a query tokenizes them (a prefix ending in an apostrophe would be searched shorter)")
    func expansionsAreTokens() throws {
        var expander = TypoExpander(terms: PackedTerms(["macy's", "macyville", "mac'n"]))
        let prefixes = try expander.expansions(of: "macys", isPrefix: true, maximumEdits: 1, limit: 100).map(\.term)
        #expect(!prefixes.contains("macy'"), "\(prefixes)")
        #expect(prefixes.allSatisfy { SearchTokenizer.tokens(in: $0).map(\.text) == [$0] }, "\(prefixes)")
    }

    @Test("the typo-neighbour check finds every expansion the walk finds among a row's terms (random words and rows)")
    func neighbourCheckCoversTheWalk() throws {
        var generator = SeededGenerator(seed: 37)
        let letters = Array("abcdeéß")
        func word(_ length: ClosedRange<Int>) -> String { String((0..<Int.random(in: length, using: &generator)).map { _ in letters.randomElement(using: &generator) ?? "a" }) }
        // A row's terms: the word typed, edited at random (0 to 3 edits of every kind), and unrelated words.
        func edited(_ word: String) -> String {
            var scalars = Array(word)
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let at = Int.random(in: 0..<max(1, scalars.count), using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0 where at < scalars.count: scalars[at] = letters.randomElement(using: &generator) ?? "a"
                case 1: scalars.insert(letters.randomElement(using: &generator) ?? "a", at: at)
                case 2 where at < scalars.count && scalars.count > 1: scalars.remove(at: at)
                case 3 where at + 1 < scalars.count: scalars.swapAt(at, at + 1)
                default: break
                }
            }
            let text = String(scalars)
            return Bool.random(using: &generator) ? String(text.prefix(Int.random(in: 1...max(1, text.count), using: &generator))) : text
        }
        var found = 0
        for _ in 0..<3_000 {
            let typed = word(5...11), isPrefix = Bool.random(using: &generator)
            let terms = (0..<Int.random(in: 1...6, using: &generator)).map { _ in Bool.random(using: &generator) ? edited(typed) : word(1...11) }
            let edits = TypoPlan.allowedEdits(for: typed)
            let normalized = SearchTokenizer.tokens(in: typed).map(\.text)
            guard normalized.count == 1, let token = normalized.first else { continue }
            let text = terms.joined(separator: " ")
            let rowTerms = SearchTokenizer.tokens(in: text, withParts: true).map(\.text)
            var expander = TypoExpander(terms: PackedTerms(rowTerms))
            let expansions = try expander.expansions(of: token, isPrefix: isPrefix, maximumEdits: edits, limit: 1_000)
            let vector = try #require(SearchTokenizer.termVector(streams: [SearchTokenizer.documentStream(of: text), [], [], []]))
            let words = try #require(searchlight_typo_words_create())
            defer { searchlight_typo_words_free(words) }
            let bytes = Array(token.utf8)
            _ = bytes.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { searchlight_typo_words_add(words, $0.baseAddress, Int32($0.count), Int32(edits), isPrefix ? 1 : 0) } }
            let near = vector.withUnsafeBufferPointer { searchlight_typo_words_near(words, $0.baseAddress, Int32($0.count)) }
            if !expansions.isEmpty {
                #expect(near == 1, "\(token)\(isPrefix ? "*" : "") in \(rowTerms): \(expansions.map(\.term))")
                found += 1
            }
        }
        #expect(found > 100)
    }

    @Test("an index of schema 13 gains every item's vector when opened for writing")
    func migrationWritesVectors() throws {
        let index = try Self.newIndex("vectors-migration", items: Self.items(count: 300, seed: 38))
        let path = index.path
        try index.write { db in
            // A text holding NUL, as builds before schema 14 stored it (FTS5 indexed every byte of it).
            try db.execute(sql: "INSERT INTO items_fts (items_fts, rowid, display_name, title, text, keywords) SELECT 'delete', id, display_name, title, text, keywords FROM items_content WHERE id = 1")
            try db.execute(sql: "UPDATE item_texts SET text = 'lake' || char(0) || 'zanzibar' WHERE id = 1")
            try db.execute(sql: "INSERT INTO items_fts (rowid, display_name, title, text, keywords) SELECT id, display_name, title, text, keywords FROM items_content WHERE id = 1")
            try db.execute(sql: "ALTER TABLE items DROP COLUMN term_vector")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v14'")
            try db.execute(sql: "PRAGMA user_version = 13")
        }
        let reopened = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try reopened.read { db in
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items WHERE term_vector IS NULL") == 0)
            for row in try Row.fetchAll(db, sql: "SELECT i.term_vector, i.display_name, t.title, t.text, t.keywords FROM items i JOIN item_texts t ON t.id = i.id") {
                let columns: [String] = [row[1] as String, row[2] as String, row[3] as String, row[4] as String]
                #expect((row[0] as Data?).map { [UInt8]($0) } == SearchTokenizer.termVector(ofColumns: columns))
            }
        }
        for query in ["san*", "zanzibar", "lake"] {
            var request = SearchRequest(query: query, near: try Coordinate(latitude: 41, longitude: 11), radius: 300_000, limit: 50)
            request.forcedPlan = .placeThenText
            let vectors = try reopened.search(request).hits
            request.forcedPlan = .intersection
            #expect(vectors.map(\.uri) == (try reopened.search(request).hits.map(\.uri)), "\(query)")
            #expect(!vectors.isEmpty, "\(query)")
        }
        // The NUL mended: stored as U+FFFD, FTS5 rebuilt from it, consistent.
        try reopened.write { db in
            #expect(try String.fetchOne(db, sql: "SELECT text FROM item_texts WHERE id = 1") == "lake\u{FFFD}zanzibar")
            try db.execute(sql: "INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
        }
    }
}
