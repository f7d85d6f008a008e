import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing

/// A term leader list answers a one-word or one-prefix search only with the page full scoring gives, and a
/// write that changes what a list describes takes it out of use in the same transaction.
@Suite("Term leader lists")
struct TermLeadersTests {
    static let words = ["san", "santa", "jose", "juan", "maria", "city", "new", "york", "port", "saint"]

    /// Items of one to three words, some alternate names, ranks from nothing to millions: every word is held
    /// by hundreds of rows, as whole values and inside longer ones.
    static func items(_ keys: Range<Int>, seed: UInt64, longNames: Bool = false) -> [IndexedItem] {
        var generator = SeededGenerator(seed: seed)
        return keys.map { key in
            let count = longNames ? Int.random(in: 4...9, using: &generator) : Int.random(in: 1...3, using: &generator)
            let name = (0..<count).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " ")
            let alternates = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                (0..<Int.random(in: 1...2, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " ")
            }
            return IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: "Place", displayName: name, text: alternates,
                               rank: [0, 1, 500, 20_000, 3_000_000].randomElement(using: &generator) ?? 0)
        }
    }

    static func newIndex(_ name: String, items: [IndexedItem]) throws -> SearchIndex {
        let index = try PreparedItemTests.newIndex(name)
        try index.apply(IndexBatch(prepared: items.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true) }
        return index
    }

    /// Prefixes of the words, short and long, one of them a whole word, some typed in capitals.
    static let prefixes = ["s*", "sa*", "San*", "sant*", "santa*", "j*", "ju*", "c*", "ma*", "YO*", "p*", "port*", "n*", "ne*"]

    /// Phrases of two and three words, some in many names, some in none; typed as phrases, and as one word
    /// of several tokens (`new-york`, the same phrase to FTS5).
    static let phrases = ["\"san juan\"", "\"New York\"", "\"santa maria\"", "\"york city port\"", "\"city city\"", "new-york",
                          "\"port saint san\"", "\"jose\"", "\"juan jose maria\""]

    /// Every page of every word, prefix and phrase, from the lists and from full scoring: the same hits, the
    /// same scores. Returns how many pages the lists answered.
    @discardableResult
    static func expectSamePages(_ index: SearchIndex, _ context: String, queries: [String] = words + ["Saint", "SAN"] + prefixes + phrases) throws -> Int {
        var answered = 0
        for word in queries {
            for (limit, offset) in [(1, 0), (5, 0), (20, 0), (20, 3), (7, 40), (64, 0), (30, 50)] {
                var request = SearchRequest(query: word, limit: limit, offset: offset)
                request.typoTolerance = false
                let listed = try index.search(request).hits.map { "\($0.uri) \($0.score)" }
                request.usesTermLeaders = false
                let full = try index.search(request).hits.map { "\($0.uri) \($0.score)" }
                #expect(listed == full, "\(context): \(word) limit \(limit) offset \(offset)")
                request.usesTermLeaders = true
                if try usedList(index, request) { answered += 1 }
            }
        }
        return answered
    }

    static func usedList(_ index: SearchIndex, _ request: SearchRequest) throws -> Bool {
        try index.explain(request).statements.contains { $0.sql == TermLeaders.listSQL }
    }

    static func staleTerms(_ index: SearchIndex) throws -> Set<String> {
        try index.read { db in try Set(String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 1")) }
    }

    static func listedKeys(_ index: SearchIndex) throws -> Set<String> {
        try index.read { db in try Set(String.fetchAll(db, sql: "SELECT term FROM leader_terms")) }
    }

    /// The lists a document holding `tokens` touches, computed apart from the tokenizer: each listed term
    /// among them, and each listed prefix some token starts with (byte by byte, as FTS5 matches prefixes).
    /// Whether a key is a prefix's, by its last byte (a character may cluster with the star).
    static func isPrefixKey(_ key: String) -> Bool { key.utf8.last == UInt8(ascii: "*") }

    /// The phrases a refresh lists, computed apart: runs of two or three words of a display name (every
    /// name read: fewer items than the sample) in a quarter of the phrase minimum's names or more, whose
    /// rows FTS5 counts at that minimum or more.
    static func frequentPhrases(in index: SearchIndex, minimumDocuments: Int) throws -> Set<String> {
        let minimum = TermLeaders.minimumPhraseDocuments(minimumDocuments)
        return try index.read { db in
            var names: [String: Int] = [:]
            for name in try String.fetchAll(db, sql: "SELECT display_name FROM items") {
                let words = name.lowercased().split(separator: " ").map(String.init)
                var runs: Set<String> = []
                for length in [2, 3] where words.count >= length {
                    for start in 0...(words.count - length) { runs.insert(words[start..<start + length].joined(separator: " ")) }
                }
                for run in runs { names[run, default: 0] += 1 }
            }
            return try Set(names.filter { Double($0.value) >= Double(minimum) / 4 }.keys.filter { phrase in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM items_fts WHERE items_fts MATCH ?", arguments: ["\"\(phrase)\""]) ?? 0 >= minimum
            })
        }
    }

    static func touchedKeys(by tokens: Set<String>, in index: SearchIndex) throws -> Set<String> {
        try listedKeys(index).filter { key in
            // A phrase's list by any of its tokens.
            if TermLeaders.isPhrase(key) { return key.split(separator: " ").contains { tokens.contains(String($0)) } }
            guard isPrefixKey(key) else { return tokens.contains(key) }
            let prefix = Array(key.utf8.dropLast())
            return tokens.contains { Array($0.utf8).starts(with: prefix) }
        }
    }

    @Test("a list answers a word's first pages exactly as full scoring, and leaves deeper ones to it")
    func pagesEqualFullScoring() throws {
        let index = try Self.newIndex("leaders-pages", items: Self.items(0..<3_000, seed: 5))
        let listed = try Self.listedKeys(index)
        #expect(Set(listed.filter { !Self.isPrefixKey($0) && !TermLeaders.isPhrase($0) }) == Set(Self.words))
        // Phrases of the names: every pair of words is in dozens of names here.
        let phrases = try Self.frequentPhrases(in: index, minimumDocuments: 100)
        #expect(Set(listed.filter(TermLeaders.isPhrase)) == phrases)
        #expect(phrases.isSuperset(of: Self.words.flatMap { first in Self.words.map { first + " " + $0 } }))
        // Every prefix of a word is held by 100 rows or more here, and a prefix of no word by none.
        let prefixes = Set(Self.words.flatMap { word in (1...word.count).map { String(word.prefix($0)) + "*" } })
        #expect(Set(listed.filter(Self.isPrefixKey)) == prefixes)
        let answered = try Self.expectSamePages(index, "fresh lists")
        #expect(answered > 40, "the lists answered \(answered) pages")
        var prefix = SearchRequest(query: "San*", limit: 20)
        prefix.typoTolerance = false
        #expect(try Self.usedList(index, prefix))
        for phrase in ["\"San Juan\"", "\"new york\""] {
            var request = SearchRequest(query: phrase, limit: 20)
            request.typoTolerance = false
            #expect(try Self.usedList(index, request), "\(phrase)")
        }
        // A page past the list is always scored in full.
        var deep = SearchRequest(query: "city", limit: 20, offset: 60)
        deep.typoTolerance = false
        #expect(try !Self.usedList(index, deep))
    }

    @Test("without ranks, whole-value matches tie at the list's boundary and are told apart by URI, as full scoring orders them")
    func tiesAtTheBoundary() throws {
        // Most stores rank nothing: every item named `city` scores the same, hundreds of them.
        let items = Self.items(0..<3_000, seed: 23).map { item in
            var item = item
            item.rank = 0
            return item
        }
        let index = try Self.newIndex("leaders-ties", items: items)
        let answered = try Self.expectSamePages(index, "no ranks")
        #expect(answered > 40, "the lists answered \(answered) pages")
        var word = SearchRequest(query: "city", limit: 20)
        word.typoTolerance = false
        #expect(try Self.usedList(index, word))
        // Edits with ranks back in, then lists listed again: still the same pages.
        var generator = SeededGenerator(seed: 24)
        let edited = Self.items(0..<300, seed: 25).map { item in
            var item = item
            item.rank = Bool.random(using: &generator) ? 0 : 7
            return item
        }
        try index.apply(IndexBatch(prepared: edited.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(2)))
        try Self.expectSamePages(index, "edited, stale")
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true) }
        #expect(try Self.expectSamePages(index, "edited, listed again") > 40)
    }

    @Test("writes mark exactly the lists of the words their documents held, old and new, in the same transaction")
    func writesMarkTouchedLists() throws {
        let items = Self.items(0..<3_000, seed: 9)
        let index = try Self.newIndex("leaders-writes", items: items)
        #expect(try Self.staleTerms(index).isEmpty)
        // p1 renamed from whatever it was to "york port": its old words and its new ones.
        let old = Set(SearchTokenizer.tokens(in: items[1].displayName + " " + items[1].text.joined(separator: " ")).map(\.text))
        var renamed = items[1]
        renamed.displayName = "york port"
        renamed.text = []
        try index.apply(IndexBatch(prepared: [PreparedItem(renamed)], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.staleTerms(index) == Self.touchedKeys(by: old.union(["york", "port"]), in: index))
        try Self.expectSamePages(index, "after a rename")
        // A delete touches the deleted item's words.
        try index.maintain(budget: 10)
        #expect(try Self.staleTerms(index).isEmpty)
        let deleted = Set(SearchTokenizer.tokens(in: items[2].displayName + " " + items[2].text.joined(separator: " ")).map(\.text))
        try index.apply(IndexBatch(deletes: [items[2].uri], checkpoint: IndexFixtures.checkpoint(3)))
        #expect(try Self.staleTerms(index) == Self.touchedKeys(by: deleted, in: index))
        try Self.expectSamePages(index, "after a delete")
        // A new static rank alone (FTS5 sees nothing) touches every list.
        try index.maintain(budget: 10)
        var promoted = items[3]
        promoted.rank = 9_000_000
        try index.apply(IndexBatch(prepared: [PreparedItem(promoted)], checkpoint: IndexFixtures.checkpoint(4)))
        #expect(try Self.staleTerms(index) == Self.listedKeys(index))
        try Self.expectSamePages(index, "after a new rank")
        try index.maintain(budget: 10)
        #expect(try Self.staleTerms(index).isEmpty)
        #expect(try Self.expectSamePages(index, "listed again") > 20)
    }

    @Test("lists of words no write touched stay exact while the index grows around them (new averages, new row counts)")
    func untouchedListsStayExact() throws {
        let index = try Self.newIndex("leaders-growth", items: Self.items(0..<2_000, seed: 21))
        // Long names of other words: the display name's average length grows, every IDF changes.
        let others = (0..<3_000).map { key in
            IndexedItem(uri: "x-coredata://STORE-A/Place/q\(key)", entity: "Place",
                        displayName: (0..<8).map { "filler\(($0 + key) % 50)" }.joined(separator: " "), rank: Double(key))
        }
        try index.apply(IndexBatch(prepared: others.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.staleTerms(index).isEmpty)
        #expect(try Self.expectSamePages(index, "after growth") > 20)
        // And the other way: long names holding the words (the average grows for rows that hold them).
        try index.apply(IndexBatch(prepared: Self.items(5_000..<6_000, seed: 22, longNames: true).map(PreparedItem.init),
                                   checkpoint: IndexFixtures.checkpoint(3)))
        try Self.expectSamePages(index, "after long names")
    }

    /// Rounds of random edits, each applied as one batch and then checked (`check` with the round), the
    /// lists listed again after every second round: deletes, new ranks, new names (`rename` gives the new
    /// name of the item at a position in a round).
    static func editInRounds(_ items: inout [IndexedItem], in index: SearchIndex, rounds: Int, edits: ClosedRange<Int>, ranks: [Double],
                             seed: UInt64, rename: (_ round: Int, _ position: Int) -> String, check: (_ round: Int) throws -> Void) throws {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<rounds {
            try applyRandomEdits(to: &items, in: index, round: round, edits: edits, ranks: ranks, using: &generator) { rename(round, $0) }
            try check(round)
            if round % 2 == 1 { try index.maintain(budget: 10) }
        }
    }

    /// One round of random edits applied as one batch.
    private static func applyRandomEdits(to items: inout [IndexedItem], in index: SearchIndex, round: Int, edits: ClosedRange<Int>, ranks: [Double],
                                         using generator: inout SeededGenerator, rename: (Int) -> String) throws {
        var upserts: [IndexedItem] = [], deletes: [String] = []
        for _ in 0..<Int.random(in: edits, using: &generator) {
            let position = Int.random(in: 0..<items.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: deletes.append(items[position].uri)
            case 1:
                items[position].rank = ranks.randomElement(using: &generator) ?? 0
                upserts.append(items[position])
            default:
                items[position].displayName = rename(position)
                upserts.append(items[position])
            }
        }
        let deleted = Set(deletes)
        try index.apply(IndexBatch(prepared: upserts.filter { !deleted.contains($0.uri) }.map(PreparedItem.init), deletes: deletes,
                                   checkpoint: IndexFixtures.checkpoint(Int64(round + 2))))
    }

    @Test("random edits, each checked against full scoring, with lists listed again now and then")
    func randomEdits() throws {
        var items = Self.items(0..<2_500, seed: 33)
        let index = try Self.newIndex("leaders-random", items: items)
        try Self.editInRounds(&items, in: index, rounds: 6, edits: 1...40, ranks: [0, 7, 80_000, 5_000_000], seed: 34) { round, position in
            Self.items(position..<position + 1, seed: UInt64(round * 1_000 + position))[0].displayName
        } check: { round in
            try Self.expectSamePages(index, "round \(round)")
        }
    }

    @Test("a writer whose listing rolled back still watches what another writer listed since")
    func rolledBackListingKeepsWatching() throws {
        let items = Self.items(0..<2_000, seed: 51)
        let first = try Self.newIndex("leaders-two-writers", items: items)
        let second = try SearchIndex(path: first.path, mode: .readWrite(permissions: nil))
        struct Abandon: Error {}
        // The first writer lists again (nothing, this time: its tokenizer then watches no term), then its
        // transaction fails; the second lists every word.
        _ = try? first.write { db in
            try TermLeaders.refresh(db, minimumDocuments: 1_000_000, listingPrefixes: true)
            throw Abandon()
        }
        try second.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true) }
        #expect(try Self.staleTerms(first).isEmpty)
        var renamed = items[5]
        renamed.displayName = "york"
        renamed.text = []
        let words = Set(SearchTokenizer.tokens(in: items[5].displayName + " " + items[5].text.joined(separator: " ")).map(\.text)).union(["york"])
        try first.apply(IndexBatch(prepared: [PreparedItem(renamed)], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.staleTerms(first) == Self.touchedKeys(by: words, in: first))
        try Self.expectSamePages(first, "after two writers")
    }

    @Test("an export's end registers the frequent prefixes stale, and an idle follower's upkeep lists them")
    func prefixesListedWhileIdle() throws {
        let index = try PreparedItemTests.newIndex("leaders-deferred")
        try index.apply(IndexBatch(prepared: Self.items(0..<3_000, seed: 61).map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: false) }
        let prefixes = Set(Self.words.flatMap { word in (1...word.count).map { String(word.prefix($0)) + "*" } })
        #expect(try Self.staleTerms(index) == prefixes)
        var request = SearchRequest(query: "San*", limit: 20)
        request.typoTolerance = false
        #expect(try !Self.usedList(index, request))
        try Self.expectSamePages(index, "prefixes registered")
        while try index.maintain(budget: 10) {}
        #expect(try Self.staleTerms(index).isEmpty)
        let phrases = try Self.frequentPhrases(in: index, minimumDocuments: 100)
        #expect(try Self.listedKeys(index) == prefixes.union(Self.words).union(phrases))
        #expect(try Self.usedList(index, request))
        #expect(try Self.expectSamePages(index, "prefixes listed while idle") > 40)
    }

    @Test("an export's end registers the terms between the two minimums stale, lists those above, and upkeep lists the rest")
    func lessFrequentTermsListedWhileIdle() throws {
        let index = try PreparedItemTests.newIndex("leaders-registered")
        try index.apply(IndexBatch(prepared: Self.items(0..<3_000, seed: 67).map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        let documents = try index.read { db in
            try Dictionary(uniqueKeysWithValues: Self.words.map { ($0, try Int.fetchOne(db, sql: "SELECT doc FROM items_vocab WHERE term = ?", arguments: [$0]) ?? 0) })
        }
        // Minimums that split the words three ways, by their counts read apart from the listing.
        let counts = documents.values.sorted()
        let registering = counts[2], minimum = counts[6]
        #expect(counts[0] < registering && registering < minimum, "the words' counts \(counts) split")
        try index.write { db in
            try TermLeaders.refresh(db, minimumDocuments: minimum, registeringDocuments: registering, listingPrefixes: false)
        }
        let registered = Set(documents.filter { $0.value >= registering && $0.value < minimum }.keys)
        let stale = try Self.staleTerms(index)
        #expect(stale.filter { !Self.isPrefixKey($0) } == registered)
        #expect(try Self.listedKeys(index).subtracting(stale).filter { !Self.isPrefixKey($0) && !TermLeaders.isPhrase($0) }
                == Set(documents.filter { $0.value >= minimum }.keys))
        let word = try #require(registered.first)
        var request = SearchRequest(query: word, limit: 20)
        request.typoTolerance = false
        #expect(try !Self.usedList(index, request), "\(word) is registered, not listed")
        try Self.expectSamePages(index, "terms registered")
        while try index.maintain(budget: 10) {}
        #expect(try Self.staleTerms(index).isEmpty)
        #expect(try Self.listedKeys(index).filter { !Self.isPrefixKey($0) && !TermLeaders.isPhrase($0) }
                == Set(documents.filter { $0.value >= registering }.keys))
        #expect(try Self.usedList(index, request), "\(word) is listed while idle")
        try Self.expectSamePages(index, "terms listed while idle")
    }

    @Test("the prefixes registered are exactly those whose terms' documents add up to the minimum, counted apart")
    func candidatePrefixesMatchBruteForce() throws {
        // Names with multi-byte scalars: a prefix ends between scalars, never inside one.
        let names = ["são paulo", "sãojosé", "ñandú", "ñame", "東京 タワー", "東北", "Ørsted", "ørkenen", "straße", "strand", "s", "st"]
        var generator = SeededGenerator(seed: 71)
        let items = (0..<1_500).map { key in
            IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: "Place",
                        displayName: (0..<Int.random(in: 1...3, using: &generator)).map { _ in names.randomElement(using: &generator) ?? "" }.joined(separator: " "))
        }
        let index = try PreparedItemTests.newIndex("leaders-candidates")
        try index.apply(IndexBatch(prepared: items.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        for minimum in [1, 40, 150, 400] {
            let (found, vocabulary) = try index.read { db in
                (try TermLeaders.candidateKeys(minimumDocuments: minimum, db: db),
                 try Row.fetchAll(db, sql: "SELECT term, doc FROM items_vocab").map { (String(try $0.text(0)), Int(try $0.integer(1))) })
            }
            var sums: [String: Int] = [:]
            for (term, documents) in vocabulary {
                if documents >= minimum { sums[term, default: 0] += 0 }
                var prefix = ""
                for scalar in term.unicodeScalars {
                    prefix.unicodeScalars.append(scalar)
                    guard prefix.utf8.count <= TermLeaders.longestListedPrefix else { break }
                    sums[prefix + "*", default: 0] += documents
                }
            }
            let terms = vocabulary.filter { $0.1 >= minimum }.map(\.0)
            let expected = Set(terms).union(sums.filter { Self.isPrefixKey($0.key) && $0.value >= minimum }.keys)
            #expect(Set(found.map(\.key)) == expected, "minimum \(minimum)")
            #expect(found.count == expected.count, "minimum \(minimum): no key twice")
            for (key, documents) in found where Self.isPrefixKey(key) { #expect(documents == sums[key], "\(key)") }
        }
    }

    @Test("a phrase whose words are too rare for lists of their own is watched through them")
    func phraseOfUnlistedWords() throws {
        var items = Self.items(0..<2_000, seed: 95)
        // 60 rows hold `alpha beta`: a phrase list (12 rows or more here), no word list (100).
        for key in 0..<60 { items[key * 30].displayName = key % 2 == 0 ? "alpha beta" : "alpha beta city" }
        let index = try Self.newIndex("leaders-rare-words", items: items)
        let listed = try Self.listedKeys(index)
        #expect(listed.contains("alpha beta") && !listed.contains("alpha") && !listed.contains("beta"))
        var request = SearchRequest(query: "\"alpha beta\"", limit: 20)
        request.typoTolerance = false
        #expect(try Self.usedList(index, request))
        // One of them renamed: the phrase's list is stale, by its word `alpha`.
        var renamed = items[30]
        renamed.displayName = "alpha"
        renamed.text = []
        try index.apply(IndexBatch(prepared: [PreparedItem(renamed)], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.staleTerms(index).contains("alpha beta"))
        #expect(try !Self.usedList(index, request))
        try Self.expectSamePages(index, "a rare phrase renamed", queries: ["\"alpha beta\"", "\"alpha beta city\"", "alpha"])
        try index.maintain(budget: 10)
        #expect(try Self.usedList(index, request))
        #expect(try Self.expectSamePages(index, "a rare phrase listed again", queries: ["\"alpha beta\"", "\"alpha beta city\""]) > 5)
    }

    @Test("an index of schema 12 gains its phrases' lists when a writer migrates it, its other lists untouched, and watches them")
    func migrationListsPhrases() throws {
        var items = Self.items(0..<2_000, seed: 99)
        // 300 rows hold `alpha beta`: above the phrase minimum of the default lists (250 rows).
        for key in 0..<300 { items[key * 6].displayName = key % 3 == 0 ? "alpha beta" : "alpha beta port" }
        let old = try Self.newIndex("leaders-migration", items: items)
        // As schema 12 left it: no phrase's list, and no v13.
        try old.write { db in
            try db.execute(sql: """
                DELETE FROM term_leaders WHERE instr(term, ' ') > 0; DELETE FROM leader_terms WHERE instr(term, ' ') > 0;
                DELETE FROM grdb_migrations WHERE identifier = 'v13'; PRAGMA user_version = 12
                """)
        }
        let before = try old.read { db in try Row.fetchAll(db, sql: "SELECT * FROM leader_terms ORDER BY term") }
        let migrated = try SearchIndex(path: old.path, mode: .readWrite(permissions: nil))
        let phrases = try Self.listedKeys(migrated).filter(TermLeaders.isPhrase)
        #expect(phrases == ["alpha beta"])
        #expect(try migrated.read { db in try Row.fetchAll(db, sql: "SELECT * FROM leader_terms WHERE instr(term, ' ') = 0 ORDER BY term") } == before)
        var request = SearchRequest(query: "\"Alpha Beta\"", limit: 20)
        request.typoTolerance = false
        #expect(try Self.usedList(migrated, request))
        try Self.expectSamePages(migrated, "migrated", queries: ["\"alpha beta\"", "\"alpha beta port\"", "alpha", "port"])
        // The migrating writer watches the phrase's tokens: a rename holding `beta` alone marks it stale.
        var renamed = items[6]
        renamed.displayName = "beta"
        renamed.text = []
        try migrated.apply(IndexBatch(prepared: [PreparedItem(renamed)], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.staleTerms(migrated).contains("alpha beta"))
        try Self.expectSamePages(migrated, "migrated, then renamed", queries: ["\"alpha beta\"", "\"alpha beta port\""])
    }

    @Test("a word whose one token holds a space once normalized never reads the list of the phrase it spells")
    func tokenHoldingASpace() throws {
        // U+037A is a letter inside a word that normalizes to a space and a mark; U+FDFB is two words.
        #expect(SearchTokenizer.tokens(in: "sanͺjuan").map(\.text) == ["san juan"])
        // No key, for a list or for the planner's counts: every key is made by these two.
        #expect(TermLeaders.key(token: "san juan", isPrefix: false) == nil && TermLeaders.key(token: "san juan", isPrefix: true) == nil)
        #expect(TermLeaders.key(phrase: ["san juan", "city"]) == nil && TermLeaders.key(phrase: ["san", "juan"]) == "san juan")
        var items = Self.items(0..<2_000, seed: 97)
        items[7].displayName = "sanͺjuan"
        items[8].displayName = "\u{FDFB}"
        items[9].displayName = "جل جلاله"
        let index = try Self.newIndex("leaders-space-token", items: items)
        #expect(try Self.listedKeys(index).contains("san juan"))
        try Self.expectSamePages(index, "tokens holding a space",
                                 queries: ["sanͺjuan", "\"sanͺjuan\"", "sanͺjuan OR york", "\u{FDFB}", "\"جل جلاله\"", "\"san juan\""])
        var request = SearchRequest(query: "sanͺjuan", limit: 20)
        request.typoTolerance = false
        #expect(try index.search(request).hits.map(\.uri) == [items[7].uri])
    }

    @Test("a value holding NUL touches the lists of the words on both sides of it")
    func nulInsideAValueTouchesItsWords() throws {
        let index = try Self.newIndex("leaders-nul", items: Self.items(0..<2_000, seed: 81))
        let item = IndexedItem(uri: "x-coredata://STORE-A/Place/n1", entity: "Place", displayName: "york\u{0}quixotic", rank: 9)
        try index.apply(IndexBatch(prepared: [PreparedItem(item)], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.staleTerms(index) == Self.touchedKeys(by: ["york", "quixotic"], in: index))
        var request = SearchRequest(query: "quixotic", limit: 5)
        request.typoTolerance = false
        #expect(try index.search(request).hits.map(\.uri) == [item.uri])
        try Self.expectSamePages(index, "after a NUL")
    }

    @Test("a prefix ending in a scalar that clusters with the star (U+0D4E) lists its own rows, not a shorter prefix's")
    func prefixEndingInAPrependScalar() throws {
        // കൎ: KA and the dot reph, a Prepend scalar: "കൎ*" is one character followed by nothing else.
        let words = ["കൎത്താവ്", "കൎമ്മം", "കടൽ", "കര", "കൎ"]
        var generator = SeededGenerator(seed: 91)
        let items = (0..<1_200).map { key in
            IndexedItem(uri: "x-coredata://STORE-A/Place/m\(key)", entity: "Place",
                        displayName: (0..<Int.random(in: 1...2, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " "),
                        rank: Double(key % 400))
        }
        let index = try PreparedItemTests.newIndex("leaders-prepend")
        try index.apply(IndexBatch(prepared: items.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 50, listingPrefixes: true) }
        #expect(try Self.listedKeys(index).contains("കൎ*"))
        try Self.expectSamePages(index, "prefixes of Malayalam words", queries: ["കൎ*", "ക*", "കട*", "കൎ"])
        var request = SearchRequest(query: "കൎ*", limit: 20)
        request.typoTolerance = false
        #expect(try Self.usedList(index, request))
    }

    @Test("a damaged list is never trusted: the search scores every match")
    func damagedListsFallBack() throws {
        let index = try Self.newIndex("leaders-damaged", items: Self.items(0..<2_000, seed: 41))
        try index.write { db in
            try db.execute(sql: "UPDATE term_leaders SET instances = x'0102' WHERE term = 'city'")
            try db.execute(sql: "UPDATE term_leaders SET instances = x'000000000700000001000000' WHERE term = 'san'")
            try db.execute(sql: "UPDATE leader_terms SET name_average = 1e999 WHERE term = 'york'")
            try db.execute(sql: "UPDATE leader_terms SET threshold = -1e999 WHERE term = 'port'")
            // A boundary that is not text proves no tie (the list may still answer above its threshold).
            try db.execute(sql: "UPDATE leader_terms SET boundary_uri = x'ff00' WHERE term IN ('jose', 'juan')")
        }
        for word in ["city", "san", "york", "port"] {
            var request = SearchRequest(query: word, limit: 10)
            request.typoTolerance = false
            #expect(try !Self.usedList(index, request), "\(word)")
        }
        try Self.expectSamePages(index, "damaged lists")
    }
}
