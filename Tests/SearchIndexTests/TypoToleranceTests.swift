import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing

/// Typo tolerance: words of 5+ letters match with one edit, 9+ with two, transpositions count as one,
/// the first letter and words with digits as typed; exact matches always first.
@Suite("Typo tolerance")
struct TypoToleranceTests {
    /// Optimal string alignment distance (transpositions of neighbours count as one), computed plainly.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int { table(a, b)[a.count][b.count] }

    /// The fewest edits between `b` and any nonempty prefix of `a`: the last column of the same table.
    static func prefixDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        let d = table(a, b)
        return (1...a.count).map { d[$0][b.count] }.min() ?? .max
    }

    static func table(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> [[Int]] {
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d
    }

    /// An index of 3,000 items named from a small alphabet, so that words crowd each other within an edit
    /// or two (the hard case for a walk that must find every neighbour and no more).
    static func crowdedIndex(seed: UInt64) throws -> (index: SearchIndex, words: [String]) {
        var generator = SeededGenerator(seed: seed)
        // Two-byte letters that survive normalization (Cyrillic) beside ones folded away (é, ß).
        let alphabet = Array("abcdeéoßжя".unicodeScalars)
        let words = (0..<3_000).map { _ in
            String(String.UnicodeScalarView((0..<Int.random(in: 3...11, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }))
        }
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("typos.searchindex").path, mode: .readWrite(permissions: nil))
        for start in stride(from: 0, to: words.count, by: 500) {
            let items = words[start..<min(start + 500, words.count)].enumerated().map { offset, word in
                IndexFixtures.item(start + offset, word, rank: Double((start + offset) % 7))
            }
            try index.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(Int64(start + 1))))
        }
        return (index, words)
    }

    @Test("packed terms answer every probe with the first term at or after it, in any order of probes")
    func packedTermsProbes() {
        var generator = SeededGenerator(seed: 13)
        // Short strings over a few bytes, some eight bytes or longer (the prefixes tie), two-byte letters.
        let alphabet = ["a", "b", "ab", "é", "ж", "\u{7F}", "aaaaaaaa"]
        func random() -> String { (0..<Int.random(in: 0...5, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }.joined() }
        for _ in 0..<200 {
            let terms = (0..<Int.random(in: 0...60, using: &generator)).map { _ in random() }.filter { !$0.isEmpty }
            let sorted = Array(Set(terms.map { Array($0.utf8) })).sorted { $0.lexicographicallyPrecedes($1) }
            var packed = PackedTerms(terms)
            #expect(packed.count == sorted.count)
            for _ in 0..<100 {
                let key = Array(random().utf8)
                let expected = sorted.first { !$0.lexicographicallyPrecedes(key) }
                #expect(packed.withTerm(atOrAfter: key) { $0.map(Array.init) } == expected, "\(String(decoding: key, as: UTF8.self))")
            }
        }
    }

    @Test("an edit-distance scan finds exactly the terms within the edits, with their edits, whatever order the terms come in")
    func editDistanceScan() {
        var generator = SeededGenerator(seed: 14)
        // Few letters, so that terms share prefixes and come within the edits; two-byte and three-byte ones.
        let alphabet = Array("abcaé€".unicodeScalars)
        func random(_ lengths: ClosedRange<Int>) -> [Unicode.Scalar] {
            (0..<Int.random(in: lengths, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }
        }
        var found = 0
        for _ in 0..<300 {
            let word = random(1...10)
            let edits = Int.random(in: 0...3, using: &generator)
            // Terms near the word (a few random edits of it) and random ones, every length from empty up.
            var terms = Set((0..<Int.random(in: 0...80, using: &generator)).map { _ in random(0...13) })
            for _ in 0..<40 {
                var term = word
                for _ in 0..<Int.random(in: 0...4, using: &generator) {
                    let position = Int.random(in: 0...term.count, using: &generator)
                    switch Int.random(in: 0...3, using: &generator) {
                    case 0 where position < term.count: term.remove(at: position)
                    case 1: term.insert(alphabet.randomElement(using: &generator) ?? "a", at: position)
                    case 2 where position < term.count: term[position] = alphabet.randomElement(using: &generator) ?? "a"
                    default: if position + 1 < term.count { term.swapAt(position, position + 1) }
                    }
                }
                terms.insert(term)
            }
            let expected = Dictionary(uniqueKeysWithValues: terms.compactMap { term -> ([Unicode.Scalar], Int)? in
                guard !term.isEmpty else { return nil }
                let distance = Self.distance(term, word)
                return distance <= edits ? (term, distance) : nil
            })
            found += expected.count
            let bytes = terms.map { Array(String(String.UnicodeScalarView($0)).utf8) }
            // In byte order, by length then byte order (the index's window), and shuffled.
            let orders = [bytes.sorted { $0.lexicographicallyPrecedes($1) },
                          bytes.sorted { $0.count != $1.count ? $0.count < $1.count : $0.lexicographicallyPrecedes($1) },
                          bytes.shuffled(using: &generator)]
            for order in orders {
                var scan = EditDistanceScan(word: String(String.UnicodeScalarView(word)), maximumEdits: edits)
                for term in order { term.withUnsafeBufferPointer { scan.add($0) } }
                #expect(scan.found == expected, "\(String(String.UnicodeScalarView(word))) within \(edits)")
            }
        }
        // Not vacuous.
        #expect(found > 3_000, "\(found) terms within the edits")
    }

    @Test("an edit-distance scan across its paths: prefixes given up then shared, a non-ASCII term before an ASCII one, ill-formed UTF-8")
    func editDistanceScanPaths() {
        // Each sequence fed in order, checked against the brute force over the scalars Swift decodes.
        let cases: [(word: String, edits: Int, terms: [[UInt8]])] = [
            // `xx` rules out `xxxx`'s prefix for its length; `xxyz` and `xxxy` share it (skipped), `abce` does not.
            ("abcd", 1, ["xxxx", "xxxy", "xxyz", "abce", "abcd", "abdc", "abcde"].map { Array($0.utf8) }),
            // Terms too long or short for the edits, then ones of the same lengths that match.
            ("abcd", 1, ["abcdxyz", "ab", "abcdxyy", "abc", "abcdx"].map { Array($0.utf8) }),
            // Non-ASCII, then ASCII sharing its first scalar, of the same length, then back.
            ("aéb", 1, ["aé€b", "aéb", "aeb", "aéc", "ab", "a€b", "aéé"].map { Array($0.utf8) }),
            ("aéb", 2, ["aé€bx", "aexbx", "aé€by", "axxbx"].map { Array($0.utf8) }),
            // Ill-formed UTF-8: a lone continuation byte, a truncated sequence, each one U+FFFD.
            ("a\u{FFFD}b", 1, [[0x61, 0x80, 0x62], [0x61, 0xC3, 0x62], [0x61, 0x62], [0x61, 0xE2, 0x82], [0x61, 0x80]]),
        ]
        for (word, edits, terms) in cases {
            var scan = EditDistanceScan(word: word, maximumEdits: edits)
            for term in terms { term.withUnsafeBufferPointer { scan.add($0) } }
            var expected: [[Unicode.Scalar]: Int] = [:]
            for term in terms {
                let scalars = Array(String(decoding: term, as: UTF8.self).unicodeScalars)
                let distance = Self.distance(scalars, Array(word.unicodeScalars))
                if !scalars.isEmpty, distance <= edits { expected[scalars] = distance }
            }
            #expect(scan.found == expected, "\(word) within \(edits)")
            #expect(!expected.isEmpty, "\(word): not vacuous")
        }
    }

    @Test("the walk finds exactly the terms a brute force over the dictionary finds, with their edits (words and prefixes)")
    func walkAgainstBruteForce() throws {
        let (index, words) = try Self.crowdedIndex(seed: 7)
        var generator = SeededGenerator(seed: 8)
        let terms: [[Unicode.Scalar]] = try index.read { db in try String.fetchAll(db, sql: "SELECT term FROM item_terms").map { Array($0.unicodeScalars) } }
        // The dictionary is exactly the vocabulary's terms of four letters or more.
        let vocabulary = Set(words.map { Array(SearchTokenizer.tokens(in: $0)[0].text.unicodeScalars) }.filter { $0.count >= TermDictionary.minimumLength })
        #expect(Set(terms) == vocabulary)
        let alphabet = Array("abcdeoxж".unicodeScalars)
        var checked = 0, windowsRead = 0, oneEditWindowsRead = 0
        for _ in 0..<200 {
            // A term with a random edit or two, or random letters.
            var query = terms.randomElement(using: &generator) ?? []
            for _ in 0..<Int.random(in: 0...2, using: &generator) where query.count > 1 {
                let position = Int.random(in: 1..<query.count, using: &generator)
                switch Int.random(in: 0...3, using: &generator) {
                case 0: query.remove(at: position)
                case 1: query.insert(alphabet.randomElement(using: &generator) ?? "a", at: position)
                case 2: query[position] = alphabet.randomElement(using: &generator) ?? "a"
                default: if position + 1 < query.count { query.swapAt(position, position + 1) }
                }
            }
            let word = String(String.UnicodeScalarView(query))
            let allowed = TypoPlan.allowedEdits(for: word)
            guard allowed > 0, let first = query.first else { continue }
            for isPrefix in [false, true] {
                let found = try index.read { db in
                    var expander = TypoExpander(db)
                    return try expander.expansions(of: word, isPrefix: isPrefix, maximumEdits: allowed, limit: .max)
                }
                // Another backend walks only the word's window of terms, held in memory: the same expansions.
                for edits in [allowed, QuerySuggestion.edits(for: word)] {
                    let window = try #require(TermWindow(word: word, isPrefix: isPrefix, edits: edits))
                    var windowed = TypoExpander(terms: PackedTerms(terms.compactMap { window.entry(for: String(String.UnicodeScalarView($0))) }))
                    let all = try index.read { db in
                        var expander = TypoExpander(db)
                        return try expander.expansions(of: word, isPrefix: isPrefix, maximumEdits: edits, limit: .max)
                    }
                    #expect(try windowed.expansions(of: word, isPrefix: isPrefix, maximumEdits: edits, limit: .max) == all, "\(word)\(isPrefix ? "*" : "") within \(edits)")
                    guard !isPrefix else { continue }
                    // This index's own window of a word (schema 17), read at once by first letter and length; the
                    // index holds every term of the dictionary (schema 19), and a window reaching shorter terms is
                    // not read.
                    let read = try index.read { db in try TermDictionary.windowMatches(of: word, edits: edits, db: db) }
                    guard let read else {
                        #expect(window.shortest < TermDictionary.shortestWindowed, "\(word) within \(edits): no window")
                        continue
                    }
                    windowsRead += 1
                    if edits == 1 { oneEditWindowsRead += 1 }
                    #expect(TypoExpansion.ranked(read, word: query, isPrefix: false, limit: .max) == all, "\(word) within \(edits), window")
                }
                if isPrefix {
                    // Each term is covered by the expansions iff one of its prefixes is within the edits.
                    for term in terms where term != query {
                        let best = Self.prefixDistance(term, query)
                        let expected = term.first == first && best <= allowed
                        let covering = found.filter { term.starts(with: Array($0.term.unicodeScalars)) }
                        #expect(!covering.isEmpty == expected || term.starts(with: query), "\(word)*: \(String(String.UnicodeScalarView(term)))")
                        if expected, !term.starts(with: query) { #expect(covering.map(\.edits).min() == best, "\(word)*") }
                    }
                } else {
                    let expected = Dictionary(uniqueKeysWithValues: terms.compactMap { term -> (String, Int)? in
                        guard term != query, term.first == first else { return nil }
                        let edits = Self.distance(term, query)
                        return edits <= allowed ? (String(String.UnicodeScalarView(term)), edits) : nil
                    })
                    #expect(Dictionary(uniqueKeysWithValues: found.map { ($0.term, $0.edits) }) == expected, "\(word)")
                }
            }
            checked += 1
        }
        #expect(checked > 100)
        // Not vacuous: long words read their windows.
        #expect(windowsRead > 50, "\(windowsRead) windows read")
        #expect(oneEditWindowsRead > 50, "\(oneEditWindowsRead) one-edit windows read")
    }

    @Test("an index of schema 16 gains the typo dictionary's chunked windows when opened for writing; readers ask for that first")
    func windowMigration() throws {
        let (index, words) = try Self.crowdedIndex(seed: 9)
        let path = index.path
        // A long word two edits from one of the index's: expanded through its window.
        let word = try #require(words.first { $0.unicodeScalars.count >= 10 && !$0.contains("ß") && !$0.contains("é") })
        var typed = Array(word.unicodeScalars)
        typed.swapAt(3, 4)
        typed[7] = typed[7] == "a" ? "b" : "a"
        let request = SearchRequest(query: String(String.UnicodeScalarView(typed)), limit: 50)
        let before = try index.search(request).hits.map(\.uri)
        // What schema 16 had: one index row per term.
        try index.write { db in
            try db.execute(sql: "DROP TABLE term_windows")
            try db.execute(sql: """
                CREATE INDEX item_terms_by_window ON item_terms (substr(term, 1, 1), length(term), term)
                WHERE length(term) >= \(TermDictionary.shortestWindowed)
                """)
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v17'")
            try db.execute(sql: "PRAGMA user_version = 16")
        }
        #expect(throws: SearchIndexError.needsUpgrade(path: path)) { try SearchIndex(path: path, mode: .readOnly) }
        let reopened = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        let (version, oldIndex) = try reopened.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"),
             try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'item_terms_by_window')"))
        }
        #expect(version == SearchIndex.schemaVersion)
        #expect(oldIndex == false)
        try Self.expectWholeWindows(reopened)
        #expect(!before.isEmpty)
        #expect(try reopened.search(request).hits.map(\.uri) == before)
    }

    @Test("an index of schema 18 (windows of 7 letters and up) gains the shorter terms' chunks when opened for writing")
    func oneEditWindowMigration() throws {
        let (index, words) = try Self.crowdedIndex(seed: 10)
        let path = index.path
        // A 6-letter word one edit from one of the index's: its window reaches terms of 5 to 7 letters.
        let word = try #require(words.first { $0.unicodeScalars.count == 6 && $0.unicodeScalars.allSatisfy(\.isASCII) })
        var typed = Array(word.unicodeScalars)
        typed.swapAt(2, 3)
        let request = SearchRequest(query: String(String.UnicodeScalarView(typed)), limit: 50)
        let before = try index.search(request).hits.map(\.uri)
        // What schema 18 had: chunks of terms of 7 letters or more.
        try index.write { db in
            try db.execute(sql: "DELETE FROM term_windows WHERE length < 7")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v19'")
            try db.execute(sql: "PRAGMA user_version = 18")
        }
        #expect(throws: SearchIndexError.needsUpgrade(path: path)) { try SearchIndex(path: path, mode: .readOnly) }
        let reopened = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        #expect(try reopened.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") } == SearchIndex.schemaVersion)
        #expect(try Self.expectWholeWindows(reopened) > 0)
        #expect(try reopened.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM term_windows WHERE length < 7") ?? 0 } > 0)
        #expect(!before.isEmpty)
        #expect(try reopened.search(request).hits.map(\.uri) == before)
    }

    /// Checks that the windows' chunks hold exactly the dictionary's terms of window length, each chunk in
    /// byte order under its own key, none empty or past capacity; returns how many chunks there are.
    @discardableResult
    static func expectWholeWindows(_ index: SearchIndex, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        // The keys as SQLite cuts and counts them (the terms are well-formed): not through the function under test.
        let (dictionary, rows) = try index.read { db in
            (try Row.fetchAll(db, sql: """
                SELECT CAST(term AS BLOB), CAST(substr(term, 1, 1) AS BLOB), length(term) FROM item_terms
                WHERE length(term) >= \(TermDictionary.shortestWindowed)
                """).map { row -> (term: [UInt8], first: [UInt8], length: Int) in ([UInt8](row[0] as Data), [UInt8](row[1] as Data), row[2]) },
             try Row.fetchAll(db, sql: "SELECT first, length, low, terms FROM term_windows ORDER BY first, length, low"))
        }
        let keys = Dictionary(uniqueKeysWithValues: dictionary.map { ($0.term, ($0.first, $0.length)) })
        var held: [[UInt8]] = []
        for row in rows {
            let first: Data = row[0], length: Int = row[1], low: Data = row[2], bytes: Data = row[3]
            let chunk = try bytes.withUnsafeBytes { try TermWindowChunk(decoding: $0) }
            #expect(!chunk.terms.isEmpty && chunk.terms.count <= TermWindowChunk.capacity, "\(chunk.terms.count) terms", sourceLocation: sourceLocation)
            #expect(chunk.terms.first == [UInt8](low), sourceLocation: sourceLocation)
            #expect(zip(chunk.terms, chunk.terms.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, sourceLocation: sourceLocation)
            for term in chunk.terms {
                let key = keys[term]
                #expect(key?.0 == [UInt8](first) && key?.1 == length, "\(String(decoding: term, as: UTF8.self))", sourceLocation: sourceLocation)
            }
            held += chunk.terms
        }
        // In the rows' order (first, length, low), the terms of one key follow one another: compare as sets of the
        // dictionary's window-length terms, each held once.
        let expected = dictionary.map(\.term)
        #expect(held.count == Set(held).count, "a term in two chunks", sourceLocation: sourceLocation)
        #expect(Set(held) == Set(expected), "\(held.count) terms in chunks, \(expected.count) in the dictionary", sourceLocation: sourceLocation)
        return rows.count
    }

    @Test("terms added batch by batch in random order fill chunks that split as they grow, and windows read from them walk as the B-tree does; a refill writes the same terms")
    func windowChunksGrow() throws {
        var generator = SeededGenerator(seed: 77)
        // Few letters, so that a first letter and a length hold hundreds of terms: chunks fill and split.
        let alphabet = Array("abcé".unicodeScalars)
        let words = Array(Set((0..<4_000).map { _ in
            String(String.UnicodeScalarView((0..<Int.random(in: 7...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }))
        }))
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("chunks.searchindex").path, mode: .readWrite(permissions: nil))
        var start = 0, batch = 0
        while start < words.count {
            // Batches of 1 to 400 words: a term may come before every chunk of its key, or land in a full one.
            let end = min(words.count, start + Int.random(in: 1...400, using: &generator))
            let items = words[start..<end].enumerated().map { IndexFixtures.item(start + $0.offset, $0.element) }
            batch += 1
            try index.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(Int64(batch))))
            if batch % 5 == 0 { try Self.expectWholeWindows(index) }
            start = end
        }
        let chunks = try Self.expectWholeWindows(index)
        let (terms, keys) = try index.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item_terms WHERE length(term) >= 7") ?? 0,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (SELECT DISTINCT first, length FROM term_windows)") ?? 0)
        }
        // Chunks split (more chunks than keys), and a split leaves two halves: at most one chunk per key is less
        // than half full.
        #expect(chunks > keys)
        #expect(chunks <= keys + terms / (TermWindowChunk.capacity / 2), "\(chunks) chunks, \(keys) keys, \(terms) terms")
        var compared = 0
        for word in words.shuffled(using: &generator).prefix(150) {
            var typed = Array(word.unicodeScalars)
            typed[Int.random(in: 1..<typed.count, using: &generator)] = alphabet.randomElement(using: &generator) ?? "a"
            if Bool.random(using: &generator) { typed.insert("b", at: Int.random(in: 1..<typed.count, using: &generator)) }
            let token = String(String.UnicodeScalarView(typed))
            guard TypoPlan.allowedEdits(for: token) == 2 else { continue }
            let (all, window) = try index.read { db in
                var expander = TypoExpander(db)
                expander.dictionary.seekLimit = .max
                return (try expander.expansions(of: token, isPrefix: false, maximumEdits: 2, limit: .max),
                        try TermDictionary.windowMatches(of: token, edits: 2, db: db))
            }
            let matches = try #require(window, "\(token)")
            #expect(TypoExpansion.ranked(matches, word: typed, isPrefix: false, limit: .max) == all, "\(token)")
            compared += 1
        }
        #expect(compared > 50)
        // A refill (a rebuild's end) writes full chunks of the same terms.
        try index.write { db in try TermDictionary.refresh(db) }
        #expect(try Self.expectWholeWindows(index) <= chunks)
    }

    @Test("a damaged chunk fails a search with the fix, and the next write adding a term to it writes every chunk anew")
    func damagedChunkRepairedByWriter() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("typos-damaged-chunk.searchindex").path,
                                    mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Interesting Monastery", text: ["Cathedral Lighthouse"])], checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try Self.expectWholeWindows(index) > 0)
        // Each write brings a term new to the dictionary in the damaged window of `interesting` (i, 11 letters).
        for (damage, word) in [("UPDATE term_windows SET terms = x'ff'", "Inheritance"), ("UPDATE term_windows SET terms = 'text'", "Informative"),
                               ("UPDATE term_windows SET low = 7", "Instructive")] {
            try index.write { db in try db.execute(sql: damage) }
            // A search reads the terms, not the keys (the writer's).
            if damage.contains("terms") {
                #expect(throws: SearchIndexError.self, "\(damage)") { try index.search(SearchRequest(query: "interestng")) }
            }
            try index.apply(IndexBatch(upserts: [IndexFixtures.item(2, word)], checkpoint: IndexFixtures.checkpoint(2)))
            #expect(try Self.expectWholeWindows(index) > 0, "\(damage)")
            #expect(try index.search(SearchRequest(query: "interestng")).hits.map(\.uri) == [IndexFixtures.item(1, "").uri], "\(damage)")
        }
    }

    @Test("terms handed to the windows in any order, twice over, before a key's first chunk, or past the most added one by one, leave them whole")
    func windowsTakeAnyOrder() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("chunk-order.searchindex").path, mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(seed: 91)
        func words(_ count: Int, letters: String) -> [[UInt8]] {
            let alphabet = Array(letters.unicodeScalars)
            return (0..<count).map { _ in
                Array(String(String.UnicodeScalarView((0..<Int.random(in: 7...9, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "m" })).utf8)
            }
        }
        // Late letters first, then early ones (before every chunk of their key), shuffled, with repeats; then more
        // than are added one by one.
        for batch in [words(300, letters: "mnoж"), words(300, letters: "abmж"), words(TermDictionary.mostAddedTerms + 500, letters: "abcdmnoж")] {
            let handed = (batch + batch.prefix(50)).shuffled(using: &generator)
            try index.write { db in
                for term in handed { try db.execute(sql: "INSERT OR IGNORE INTO item_terms (term) VALUES (?)", arguments: [String(decoding: term, as: UTF8.self)]) }
                try TermDictionary.addToWindows(handed, db: db)
            }
            try Self.expectWholeWindows(index)
        }
        // A damaged chunk is refused by the reader, not trapped on, and written anew by the writer (from item_terms).
        try index.write { db in try db.execute(sql: "UPDATE term_windows SET terms = 42") }
        #expect(throws: (any Error).self) { try index.read { db in try TermDictionary.windowMatches(of: "mnomnomno", edits: 2, db: db) } }
        try index.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO item_terms (term) VALUES ('mnomnomnx')")
            try TermDictionary.addToWindows([Array("mnomnomnx".utf8)], db: db)
        }
        try Self.expectWholeWindows(index)
        #expect(try index.read { db in try TermDictionary.windowMatches(of: "mnomnomno", edits: 2, db: db) } != nil)
    }

    @Test("a chunk's bytes: terms round-trip in order, long ones included; cut or overlong counts are damage, not a crash")
    func windowChunkBytes() throws {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<200 {
            let terms = Set((0..<Int.random(in: 0...70, using: &generator)).map { _ in
                (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }).sorted { $0.lexicographicallyPrecedes($1) }
            let bytes = TermWindowChunk(terms: terms).encoded
            #expect(try bytes.withUnsafeBytes { try TermWindowChunk(decoding: $0) }.terms == terms)
            // Cut anywhere inside a term or its count: damage (a cut between terms is a shorter chunk).
            guard !bytes.isEmpty else { continue }
            let cut = Int.random(in: 0..<bytes.count, using: &generator)
            if let terms = try? bytes[..<cut].withUnsafeBytes({ try TermWindowChunk(decoding: $0) }).terms {
                #expect(TermWindowChunk(terms: terms).encoded == Array(bytes[..<cut]))
            }
        }
        // A count past the row, and a count that never ends.
        #expect(throws: TermWindowChunk.Damage.self) { try [UInt8]([5, 1, 2]).withUnsafeBytes { try TermWindowChunk(decoding: $0) } }
        #expect(throws: TermWindowChunk.Damage.self) { try [UInt8](repeating: 0xFF, count: 12).withUnsafeBytes { try TermWindowChunk(decoding: $0) } }
        var chunk = TermWindowChunk(terms: [Array("alpha".utf8), Array("gamma".utf8)])
        let added = chunk.insert(Array("beta".utf8)), addedAgain = chunk.insert(Array("gamma".utf8))
        #expect(added && !addedAgain)
        #expect(chunk.terms == ["alpha", "beta", "gamma"].map { Array($0.utf8) })
    }

    @Test("exact matches always outrank typo matches, whatever their rank; every exact hit is kept")
    func exactFirst() throws {
        let (index, words) = try Self.crowdedIndex(seed: 11)
        var generator = SeededGenerator(seed: 12)
        var typoHits = 0
        for _ in 0..<200 {
            let word = words.randomElement(using: &generator) ?? "abcde"
            guard TypoPlan.allowedEdits(for: word) > 0 else { continue }
            let tolerant = try index.search(SearchRequest(query: word, limit: 1_000)).hits
            var exactRequest = SearchRequest(query: word, limit: 1_000)
            exactRequest.typoTolerance = false
            let exact = try index.search(exactRequest).hits
            #expect(tolerant.map(\.typos) == tolerant.map(\.typos).sorted(), "\(word)")
            #expect(Array(tolerant.prefix(exact.count).map(\.uri)) == exact.map(\.uri), "\(word)")
            #expect(exact.allSatisfy { $0.typos == 0 } && tolerant.dropFirst(exact.count).allSatisfy { $0.typos > 0 })
            #expect(try index.count(SearchRequest(query: word)) == tolerant.count)
            // Pages the exact matches fill skip the expansions: they must be the same pages.
            for (offset, limit) in [(0, 1), (0, 5), (2, 3), (exact.count, 2)] {
                let page = try index.search(SearchRequest(query: word, limit: limit, offset: offset)).hits.map(\.uri)
                #expect(page == Array(tolerant.dropFirst(offset).prefix(limit).map(\.uri)), "\(word) \(offset)+\(limit)")
            }
            typoHits += tolerant.count - exact.count
        }
        #expect(typoHits > 20)  // the test saw typo matches at all
    }

    @Test("the issue's words: zurch, berln, tokyoo; --exact turns it off; short words, digits and the first letter as typed")
    func issueWords() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("typos.searchindex").path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [
            IndexFixtures.item(1, "Zürich", rank: 1), IndexFixtures.item(2, "Berlin", rank: 1), IndexFixtures.item(3, "Tokyo", rank: 1),
            IndexFixtures.item(4, "Zurich Lake", rank: 100_000), IndexFixtures.item(5, "Town998"), IndexFixtures.item(6, "Paris"),
            IndexFixtures.item(7, "Philadelphia"), IndexFixtures.item(8, "Moscow"), IndexFixtures.item(9, "Great Barrier Reef"),
        ], checkpoint: IndexFixtures.checkpoint(1)))
        func names(_ query: String, exact: Bool = false) throws -> [String] {
            var request = SearchRequest(query: query)
            request.typoTolerance = !exact
            return try index.search(request).hits.map { $0.displayName }
        }
        #expect(try names("zurch") == ["Zürich", "Zurich Lake"])
        #expect(try names("berln") == ["Berlin"])
        #expect(try names("tokyoo") == ["Tokyo"])
        #expect(try names("mosocw") == ["Moscow"])           // a transposition is one edit
        #expect(try names("filadelphia").isEmpty)            // the first letter is never a typo
        #expect(try names("phildelpia") == ["Philadelphia"]) // 10 letters: two edits
        #expect(try names("phldelpia").isEmpty)              // 9 letters, three edits
        #expect(try names("pariss") == ["Paris"])
        #expect(try names("pari").isEmpty)                   // 4 letters: as typed
        #expect(try names("town999").isEmpty)                // a digit: as typed
        #expect(try names("zurch", exact: true).isEmpty)
        #expect(try names("grreat barier") == ["Great Barrier Reef"]) // every word may carry its typo
        #expect(try Set(names("zuri*")) == ["Zurich Lake", "Zürich"])
        #expect(try Set(names("zurik*")) == ["Zurich Lake", "Zürich"]) // prefixes too: 5 letters, one edit
        #expect(try names("zurc*").isEmpty)                         // a 4-letter prefix: as typed
        // Typo matches rank below exact ones even against a far higher rank: "zurich" finds both exactly.
        #expect(try index.search(SearchRequest(query: "zurch")).hits.allSatisfy { $0.typos == 1 })
        // explain shows the expansions.
        let explained = try index.explain(SearchRequest(query: "zurch"))
        #expect(explained.parsedQuery?.description == "[word zurch ~ zurich (1 edit)]")
        #expect(explained.expression == "(\"zurch\" OR \"zurich\")")
    }

    @Test("a near-miss beside the word typed changes nothing: exact rows score as without typo tolerance; filter plans have no typos")
    func exactScoresUnchanged() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("typos.searchindex").path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [
            IndexFixtures.item(1, "Zurich Zurch"), IndexFixtures.item(2, "Zurich"), IndexFixtures.item(3, "Zurch Lake"),
            IndexedItem(uri: "x-coredata://STORE-A/Place/p4", entity: "Place", displayName: "Old", rank: -1e300, attributes: ["n": [.number(1)]]),
            IndexedItem(uri: "x-coredata://STORE-A/Place/p5", entity: "Place", displayName: "Older", rank: -3e7, attributes: ["n": [.number(1)]]),
        ], checkpoint: IndexFixtures.checkpoint(1)))
        var exact = SearchRequest(query: "zurich")
        exact.typoTolerance = false
        let tolerant = try index.search(SearchRequest(query: "zurich", limit: 1)).hits
        let asTyped = try index.search(exact).hits
        #expect(try index.search(SearchRequest(query: "zurich")).hits.map(\.displayName) == ["Zurich", "Zurich Zurch", "Zurch Lake"])
        #expect(Dictionary(uniqueKeysWithValues: try index.search(SearchRequest(query: "zurich")).hits.prefix(2).map { ($0.uri, $0.score) })
                == Dictionary(uniqueKeysWithValues: asTyped.map { ($0.uri, $0.score) }) && tolerant.count == 1)
        var filtered = SearchRequest()
        filtered.filter = "n == 1"
        let hits = try index.search(filtered).hits
        #expect(hits.map(\.typos) == [0, 0] && Set(hits.map(\.score)) == [-1e300, -3e7])
    }

    @Test("nothing matches: the nearest term is suggested, for each word that matches nothing")
    func suggestions() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("typos.searchindex").path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [
            IndexFixtures.item(1, "Berlin Zoo"), IndexFixtures.item(2, "Bern", text: ["Bern Bern"]), IndexFixtures.item(3, "Brno"),
        ], checkpoint: IndexFixtures.checkpoint(1)))
        func suggestion(_ query: String, exact: Bool = false) throws -> String? {
            var request = SearchRequest(query: query)
            request.typoTolerance = !exact
            let results = try index.search(request)
            #expect(results.hits.isEmpty || results.suggestion == nil)
            return results.suggestion?.query
        }
        #expect(try suggestion("berlni") == nil)                    // found as a typo: nothing to suggest
        #expect(try suggestion("berlni", exact: true) == "berlin")
        #expect(try suggestion("brlin zoo", exact: true) == "berlin zoo")
        #expect(try suggestion("bexlinn zoo") == "berlin zoo")      // two edits: too far to match, near enough to suggest
        // Only the word that matches nothing is replaced; the dictionary holds terms of 4 letters or more, so
        // "zoo" is never proposed.
        #expect(try suggestion("berlin zooo") == nil)
        #expect(try suggestion("qqqqqq") == nil)
        #expect(try index.search(SearchRequest(query: "zoo", offset: 5)).suggestion == nil)
    }

    @Test("refilled from the leader lists' one pass over the vocabulary (an export's end), the dictionary is the vocabulary, the keys are a brute force's, and windows walk as the B-tree does")
    func refilledFromOnePass() throws {
        let (index, words) = try Self.crowdedIndex(seed: 11)
        // Terms of deleted items stay in the dictionary until a refill.
        try index.apply(IndexBatch(deletes: (0..<300).map { IndexFixtures.item($0, "").uri }, checkpoint: IndexFixtures.checkpoint(9_000)))
        // Low enough that prefixes of the longest listed length qualify too.
        let minimum = 3
        let keys = try index.write { db -> [String] in
            try TermLeaders.refresh(db, minimumDocuments: minimum, listingPrefixes: false, refillingDictionary: true)
            return try String.fetchAll(db, sql: "SELECT term FROM leader_terms ORDER BY term")
        }
        let (vocabulary, dictionary) = try index.read { db in
            (try Row.fetchAll(db, sql: "SELECT term, doc FROM items_vocab").map { (row: Row) -> (String, Int) in (row[0], row[1]) },
             try String.fetchAll(db, sql: "SELECT term FROM item_terms ORDER BY term"))
        }
        let windowed = try Self.expectWholeWindows(index)
        // The dictionary: exactly the vocabulary's terms of four letters or more, the deleted items' gone.
        #expect(dictionary == vocabulary.map(\.0).filter { $0.unicodeScalars.count >= TermDictionary.minimumLength }.sorted())
        #expect(windowed > 0)
        // The keys: words held by `minimum` rows or more, and prefixes (whole scalars, at most the longest
        // listed bytes) whose terms' rows add up to that many, counted by brute force.
        var prefixSums: [String: Int] = [:]
        for (term, documents) in vocabulary {
            var prefix = ""
            for scalar in term.unicodeScalars {
                prefix.unicodeScalars.append(scalar)
                guard prefix.utf8.count <= TermLeaders.longestListedPrefix else { break }
                prefixSums[prefix, default: 0] += documents
            }
        }
        let expected = vocabulary.filter { $0.1 >= minimum }.map(\.0) + prefixSums.filter { $0.value >= minimum }.map { $0.key + "*" }
        // (Phrases' keys, of several tokens, come from the names, not from this pass.)
        #expect(Set(keys.filter { !$0.contains(" ") }) == Set(expected))
        #expect(keys.count > 10)
        // Windows read from the refilled index walk as the B-tree does.
        var generator = SeededGenerator(seed: 12)
        var compared = 0
        for word in words.shuffled(using: &generator).prefix(400) where word.unicodeScalars.count >= TypoPlan.twoEditLength {
            let token = SearchTokenizer.tokens(in: word)[0].text
            let (all, window) = try index.read { db in
                var expander = TypoExpander(db)
                return (try expander.expansions(of: token, isPrefix: false, maximumEdits: 2, limit: .max),
                        try TermDictionary.windowMatches(of: token, edits: 2, db: db))
            }
            let matches = try #require(window, "\(token)")
            #expect(TypoExpansion.ranked(matches, word: Array(token.unicodeScalars), isPrefix: false, limit: .max) == all, "\(token)")
            compared += 1
        }
        #expect(compared > 50)
    }

    @Test("the dictionary follows the writer: new terms at once, terms of deleted items gone after a rebuild's sweep")
    func dictionaryMaintenance() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("typos.searchindex").path, mode: .readWrite(permissions: nil))
        func terms() throws -> Set<String> { try index.read { db in Set(try String.fetchAll(db, sql: "SELECT term FROM item_terms")) } }
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Lisbon", text: ["Tagus estuary"]), IndexFixtures.item(2, "Porto")],
                                   checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try terms() == ["lisbon", "tagus", "estuary", "porto"])
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Lisboa", text: ["Tagus estuary"])], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try terms().isSuperset(of: ["lisboa", "lisbon"]))
        // A stale term never stands in for a word: "lisbon" is one edit from "lisboa", nothing else.
        let explained = try index.explain(SearchRequest(query: "lisbonn"))
        #expect(explained.parsedQuery?.description == "[word lisbonn]")
        try index.beginRebuild(storeUUID: "STORE-A")
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Lisboa", text: ["Tagus estuary"])], checkpoint: IndexFixtures.checkpoint(3), marksRebuild: true))
        try index.sweep(keeping: IndexFixtures.checkpoint(3))
        #expect(try terms() == ["lisboa", "tagus", "estuary"])
        try index.removeStore(uuid: "STORE-A")
        #expect(try terms().isEmpty)
        // The windows go with the terms (a window of the old terms would spend expansion slots on nothing).
        #expect(try Self.expectWholeWindows(index) == 0)
        // A first export fills the dictionary once, with the batch that ends it.
        func exporting(_ token: Int64, done: Bool) -> StoreCheckpoint {
            StoreCheckpoint(storeUUID: "STORE-B", storePath: "/tmp/STORE-B.sqlite", token: token, exportState: done ? nil : "first export")
        }
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Kyoto", store: "STORE-B")], checkpoint: exporting(1, done: false)))
        #expect(try terms().isEmpty)
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(2, "Osaka", store: "STORE-B")], checkpoint: exporting(2, done: true)))
        #expect(try terms() == ["kyoto", "osaka"])
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(3, "Nagoya", store: "STORE-B")], checkpoint: exporting(3, done: true)))
        #expect(try terms() == ["kyoto", "osaka", "nagoya"])
    }

    @Test("the dictionary holds every indexed term of 4+ letters after random inserts, replacements read ahead or not, and deletes")
    func dictionaryCoversEveryTerm() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("typos-random.searchindex").path, mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(seed: 41)
        var items = PreparedItemTests.randomItems(count: 120, seed: 42)
        try index.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(1)))
        for round in 2...30 {
            // A third of the items change one text value (a renamed country), gain one, or get a new name.
            var changed: [IndexedItem] = []
            for position in items.indices where Int.random(in: 0..<3, using: &generator) == 0 {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where !items[position].text.isEmpty:
                    items[position].text[items[position].text.count - 1] = PreparedItemTests.randomText(&generator, words: 3) + " r\(round)x\(position)"
                case 1: items[position].text.append("Added\(round)word\(position)")
                default: items[position].displayName = PreparedItemTests.randomText(&generator, words: 2) + " Renamed\(round)"
                }
                changed.append(items[position])
            }
            let deletes = Int.random(in: 0..<2, using: &generator) == 0 && !items.isEmpty ? [items.removeLast().uri] : []
            // New items first, right after the deletes: a delete's term stage must not outlast it.
            for fresh in PreparedItemTests.randomItems(count: 2, seed: UInt64(100 + round), prefix: "Fresh\(round) ") {
                var item = fresh
                item.uri += "-\(round)"
                items.append(item)
                changed.insert(item, at: 0)
            }
            var prepared = changed.map(PreparedItem.init)
            if round % 2 == 0 { try index.prepareReplacements(of: &prepared) }
            try index.apply(IndexBatch(prepared: prepared, deletes: deletes, checkpoint: IndexFixtures.checkpoint(Int64(round))))
            let missing = try index.read { db in
                try String.fetchAll(db, sql: "SELECT term FROM items_vocab WHERE length(term) >= 4 EXCEPT SELECT term FROM item_terms")
            }
            #expect(missing.isEmpty, "round \(round): \(missing.prefix(5))")
        }
    }
}
