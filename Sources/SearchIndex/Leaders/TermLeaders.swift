import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Term leader lists: for each frequent term or prefix, the items that score best for it alone, so that a
/// one-word search answers its first page from a few dozen rows instead of scoring every row that holds
/// the word.
///
/// A common word (`city`: 63,684 of 939,632 places) made FTS5 walk its whole doclist, joining and bounding
/// every row, because BM25's partial matches give a pruning bound too loose to stop early. A list keeps, for
/// a term held by ``minimumDocuments`` rows or more, its ``listedRows`` best rows with their phrase
/// instances, the term's document frequency, and the best score left off the list. A search scores the
/// listed rows again with the ranking's own scorer (the statistics of the index as it is now) and answers
/// from them only when its page's last score beats every row left off: the page is then exactly the one
/// full scoring gives. Otherwise — a stale list, a page deeper than the list, a row off the list that might
/// tie — it scores every row, as before.
///
/// Lists stay true by being dropped, never by being trusted: the connection's tokenizer sees every document
/// the writer adds or deletes and notes the listed terms it holds (`searchlight_watch_term`); the writer
/// marks those lists stale in the same transaction (``saveTouched(_:)``). A change FTS5 does not see (an
/// item's static rank alone) marks every list. (A writer of a build before schema 9 that opened the file
/// before a newer build migrated it marks nothing, and one before schema 13 never marks a phrase's list: run
/// one build's writers at a time.) A first export or a
/// rebuild lists the index's frequent terms when it ends
/// (``refresh(_:minimumDocuments:registeringDocuments:listingPrefixes:refillingDictionary:)``) and registers,
/// stale, the less frequent terms down to ``registeredDocuments`` rows;
/// a follower lists stale terms again while idle, cheapest first, within a time budget
/// (``refreshStale(_:budget:)``, through `IndexWriter.maintain(budget:)`).
///
/// A prefix a search as you type sends (`san*`) has a list too, keyed `san*` (schema 10): its best rows for
/// the prefix alone, watched by every token starting with it. Frequent prefixes are registered stale when
/// an export ends and listed by an idle follower, since listing them costs a third of the export.
///
/// So does a frequent phrase (`"San Juan"`), keyed by its tokens, `san juan` (schema 13): the runs of two
/// or three words that open or fill many display names, held by ``minimumPhraseDocuments(_:)`` rows or
/// more, listed when the terms are. A phrase's list is watched through each of its tokens: a write holding
/// any of them marks it stale, a superset of those that held the phrase.
enum TermLeaders {
    /// The fewest rows holding a term for it to be listed when an export ends: below, scoring every row takes
    /// about a millisecond.
    static let minimumDocuments = 2_000
    /// The fewest rows holding a term for it to be registered, stale, when an export ends, for an idle
    /// follower to list: a word of 1,000–1,999 rows scored whole took 2.0–2.7 ms at 939,632 items (`Valley`,
    /// `Beach`, `Point`), one of 500–999 rows up to 2.7 ms read cold (`Nueva`, 796 rows), past a one-word
    /// page's 2 ms; listing them all at the export's end would cost it what listing the prefixes would. At
    /// 939,632 items, 500 rather than 1,000 lists 483 more words (12 MB, 1 % of the index) in 1.5 s more
    /// idle upkeep (36.2 → 37.7 s).
    static let registeredDocuments = 500
    /// The rows a list keeps: a page of 20 needs the 20th best to beat the best row left off.
    static let listedRows = 64

    /// The tables, created by schema 9.
    static let schema = """
        CREATE TABLE leader_terms (
            term TEXT PRIMARY KEY,
            documents INTEGER NOT NULL,   -- the rows holding the term (its document frequency), exact while not stale
            rows INTEGER NOT NULL,        -- FTS5's rows when listed
            name_average REAL NOT NULL,   -- the display name's and title's average lengths then: later scores
            title_average REAL NOT NULL,  -- of rows left off grow at most by their ratio
            threshold REAL,               -- the best score of a row left off, then; NULL when every row is listed
            stale INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE TABLE term_leaders (
            term TEXT NOT NULL,
            id INTEGER NOT NULL,
            instances BLOB NOT NULL,      -- (phrase 0, column, position) native int triples: the term's places in the row
            PRIMARY KEY (term, id)
        ) WITHOUT ROWID;
        CREATE TABLE leader_state (generation INTEGER NOT NULL);
        INSERT INTO leader_state (generation) VALUES (0);
        """

    /// The column schema 12 adds: the URI of the row left off first (with `threshold`, the boundary).
    static let boundarySchema = """
        ALTER TABLE leader_terms ADD COLUMN boundary_uri TEXT;  -- the URI of that row: a row tied with it and before it by URI is proven
        """

    /// The longest prefix, in bytes, that gets a list (the tokenizer checks each token's prefixes up to it).
    static let longestListedPrefix = Int(SEARCHLIGHT_LONGEST_LISTED_PREFIX)

    /// A list's key: the term, or for a prefix's list the prefix followed by `*` (no token holds a `*`:
    /// the tokenizer's words are letters, digits and marks, joined by word-inner separators only). Nil for
    /// a token holding a space, which normalizing makes of `ͺ` (U+037A, a letter inside a word) and of `ﷻ`
    /// (U+FDFB, two words in one scalar): its key would read as a phrase's (`sanͺjuan`, one token, would
    /// read the list of `"san juan"`), so it has no list.
    static func key(token: String, isPrefix: Bool) -> String? {
        guard !isPhrase(token) else { return nil }
        return isPrefix ? token + "*" : token
    }

    /// A phrase's key: its tokens joined by spaces; nil for fewer than two, or a token holding a space.
    static func key(phrase tokens: [String]) -> String? {
        guard tokens.count > 1, !tokens.contains(where: isPhrase) else { return nil }
        return tokens.joined(separator: " ")
    }

    /// The tokens a key's phrase holds: one for a term's or a prefix's key, several for a phrase's.
    static func tokens(ofKey key: String) -> [String] {
        token(ofKey: key).token.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
    }

    /// The token a key lists and whether it is a prefix.
    static func token(ofKey key: String) -> (token: String, isPrefix: Bool) {
        // By bytes: a character may join the star (a Prepend scalar such as U+0D4E clusters with what
        // follows it), and dropping the last character would drop a scalar of the prefix with it.
        guard key.utf8.count > 1, key.utf8.last == UInt8(ascii: "*") else { return (key, false) }
        return (String(decoding: key.utf8.dropLast(), as: UTF8.self), true)
    }

    /// The FTS5 phrase of a key, quoted as a query's word, prefix or phrase is.
    static func expression(of key: String) -> String {
        let (text, isPrefix) = token(ofKey: key)
        let tokens = tokens(ofKey: key)
        return ParsedQuery.Term(text: text, tokens: tokens, isPrefix: isPrefix, isPhrase: tokens.count > 1).expression
    }

    // MARK: Keeping lists true

    /// Before a write transaction's work: the connection's tokenizer watches the terms of the lists that
    /// are not stale (again, when another connection listed terms since).
    static func watch(_ db: Database) throws {
        guard let offers = searchlight_token_offers(db.sqliteConnection) else { return }
        let generation = try Int64.fetchOne(db.cachedStatement(sql: "SELECT generation FROM leader_state")) ?? 0
        guard searchlight_watch_generation(offers) != generation else { return }
        searchlight_watch_reset(offers, generation)
        // A phrase's list is watched through each of its tokens: a document holding the phrase holds them all.
        let keys = try String.fetchAll(db.cachedStatement(sql: "SELECT term FROM leader_terms WHERE stale = 0"))
        for term in Set(keys.flatMap { key in isPhrase(key) ? tokens(ofKey: key) : [key] }) {
            var term = term
            let status = term.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { searchlight_watch_term(offers, $0.baseAddress, Int32($0.count)) }
            }
            guard status == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "out of memory while reading the index's term lists: free some memory and run it again") }
        }
    }

    /// Before a write transaction commits: the lists of the terms its documents held are stale.
    static func saveTouched(_ db: Database) throws {
        var touched: [String] = []
        let status: Int32
        if let offers = searchlight_token_offers(db.sqliteConnection) {
            status = withUnsafeMutablePointer(to: &touched) { pointer in
                searchlight_drain_touched(offers, pointer) { context, term, length in
                    guard let context, let term else { return 1 }
                    let bytes = UnsafeRawBufferPointer(start: term, count: Int(length))
                    context.assumingMemoryBound(to: [String].self).pointee.append(String(decoding: bytes, as: UTF8.self))
                    return 0
                }
            }
        } else {
            status = 1 // no tokenizer state: nothing tells which lists a write left true
        }
        if status != 0 {
            try db.cachedStatement(sql: "UPDATE leader_terms SET stale = 1 WHERE stale = 0").execute()
            return
        }
        // Lists stay watched until the next listing: most touched in a follower's storm are stale already,
        // and marking them again would rewrite their rows at every save.
        guard !touched.isEmpty else { return }
        let mark = try db.cachedStatement(sql: "UPDATE leader_terms SET stale = 1 WHERE term = ? AND stale = 0")
        for term in touched { try mark.execute(arguments: [term]) }
        // A phrase's list is stale when a document held one of its tokens: a superset of those that held
        // the phrase, which the tokenizer does not tell.
        let tokens = Set(touched)
        let phrases = try String.fetchAll(db.cachedStatement(sql: "SELECT term FROM leader_terms WHERE stale = 0 AND instr(term, ' ') > 0"))
        for phrase in phrases where Self.tokens(ofKey: phrase).contains(where: tokens.contains) { try mark.execute(arguments: [phrase]) }
    }

    /// Whether a key is a phrase's (several tokens): it holds a space.
    static func isPhrase(_ key: String) -> Bool { key.utf8.contains(UInt8(ascii: " ")) }

    /// A change that moves scores without FTS5 seeing it (an item's static rank): every list is stale.
    static func touchAll(_ offers: UnsafeMutableRawPointer?) {
        if let offers { searchlight_touch_all(offers) }
    }

    /// Drops every list (FTS5 emptied at once, which tokenizes nothing).
    static func forgetAll(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM term_leaders; DELETE FROM leader_terms; DELETE FROM leader_places; DELETE FROM leader_place_tails")
        try db.execute(sql: "UPDATE leader_state SET generation = random() & 9223372036854775807")
    }

    // MARK: Listing

    /// Lists every term held by `minimumDocuments` rows or more, anew (a first export's or a rebuild's end),
    /// the frequent phrases of the names (``candidatePhrases(minimumDocuments:db:)``), and the prefixes
    /// whose terms are: at once with `listingPrefixes`, else registered stale for
    /// ``refreshStale(_:budget:)`` to list while a follower is idle. A prefix's scan makes FTS5 merge the
    /// doclists of every term it covers, positions included, and the short prefixes cover most rows several
    /// times over: listing them all took a first export of the full Corpus from 8.7 s to 11 s.
    /// With `refillingDictionary`, the typo dictionary (``TermDictionary``) is refilled from the same pass over
    /// the vocabulary.
    /// The terms held by `registeringDocuments` rows or more but fewer than `minimumDocuments` are registered
    /// stale too, for the same follower.
    static func refresh(_ db: Database, minimumDocuments: Int = minimumDocuments, registeringDocuments: Int = registeredDocuments,
                        listingPrefixes: Bool, refillingDictionary: Bool = false, depths: PlacedDepths = .standard) throws {
        // What this transaction wrote so far is what the new lists describe: its touches are spent.
        try saveTouched(db)
        try forgetAll(db)
        var candidates: [(key: String, documents: Int)] = []
        let registering = Swift.min(registeringDocuments, minimumDocuments)
        if refillingDictionary {
            try TermDictionary.refill(db) { keep in
                candidates = try candidateKeys(minimumDocuments: minimumDocuments, minimumTermDocuments: registering, db: db, eachTerm: keep)
            }
        } else {
            candidates = try candidateKeys(minimumDocuments: minimumDocuments, minimumTermDocuments: registering, db: db)
        }
        try withoutMemoryMap(db) {
            for (key, documents) in candidates {
                if listsAtOnce(key, documents: documents, minimumDocuments: minimumDocuments, listingPrefixes: listingPrefixes) {
                    try list(key, minimumDocuments: minimumDocuments, depths: depths, db: db)
                } else {
                    try register(key, documents: documents, db: db)
                }
            }
            try listPhrases(minimumDocuments: minimumDocuments, depths: depths, db: db)
        }
        try bumpGeneration(db)
    }

    /// Whether a refresh lists a candidate key at once, or registers it stale for an idle follower: a term held
    /// by `minimumDocuments` rows or more is listed, a prefix only when `listingPrefixes`.
    static func listsAtOnce(_ key: String, documents: Int, minimumDocuments: Int, listingPrefixes: Bool) -> Bool {
        token(ofKey: key).isPrefix ? listingPrefixes : documents >= minimumDocuments
    }

    /// Lists the frequent phrases, leaving the other lists as they are (an index listed by a build without
    /// phrase lists).
    static func refreshPhrases(_ db: Database, minimumDocuments: Int = minimumDocuments) throws {
        try saveTouched(db)
        try withoutMemoryMap(db) { try listPhrases(minimumDocuments: minimumDocuments, db: db) }
        try bumpGeneration(db)
    }

    /// Lists the frequent phrases anew (``candidatePhrases(minimumDocuments:db:)``), through the page
    /// cache: the sample's seeks touch most of the items table.
    private static func listPhrases(minimumDocuments: Int, depths: PlacedDepths = .standard, db: Database) throws {
        for phrase in try candidatePhrases(minimumDocuments: minimumDocuments, db: db) {
            try forget(phrase, db: db)
            try list(phrase, minimumDocuments: minimumPhraseDocuments(minimumDocuments), depths: depths, db: db)
        }
    }

    /// Drops one list, its rows and its entry.
    private static func forget(_ key: String, db: Database) throws {
        try db.execute(sql: """
            DELETE FROM term_leaders WHERE term = ?; DELETE FROM leader_terms WHERE term = ?; DELETE FROM leader_places WHERE term = ?;
            DELETE FROM leader_place_tails WHERE term = ?
            """, arguments: [key, key, key, key])
    }

    /// The fewest rows holding a phrase for it to be listed: an eighth of a term's (250). A phrase's page
    /// must come within a millisecond where a word's may take two, and a search that reads a match's pages
    /// for the first time pays about 3 µs for it (`"Santa Ana"`, 480 rows: 1.7 ms the first time, 0.4 after).
    static func minimumPhraseDocuments(_ minimumDocuments: Int) -> Int { Swift.max(1, minimumDocuments / 8) }

    /// The display names a search for frequent phrases reads at most: evenly spaced items.
    static let sampledNames = 65_536

    /// The phrases of two or three words that open or fill the items' display names often enough that
    /// they may be held by ``minimumPhraseDocuments(_:)`` rows: what people type between quotes is a name
    /// (`"San Juan"`, 1,672 of 939,632 places, scored in 1.1 ms). Counted in a sample of the names, evenly
    /// spaced by id, each phrase once per name; a phrase is a candidate when its estimated names reach a
    /// quarter of that minimum (its alternate names and titles hold it too, and a sample errs). Listing
    /// counts its rows exactly and keeps only those it finds frequent. Keys in
    /// ``key(phrase:)`` form: the tokens a query of the phrase gives.
    static func candidatePhrases(minimumDocuments: Int, db: Database) throws -> [String] {
        guard let bounds = try Row.fetchOne(db, sql: "SELECT min(id), max(id), count(*) FROM items"),
              let low: Int64 = bounds[0], let high: Int64 = bounds[1] else { return [] }
        let items: Int = bounds[2]
        guard items >= minimumPhraseDocuments(minimumDocuments) else { return [] }
        let names: [String]
        if items <= sampledNames {
            names = try String.fetchAll(db, sql: "SELECT display_name FROM items")
        } else {
            // One seek per sampled id: reading every name of a million items took longer than the listing.
            let next = try db.cachedStatement(sql: "SELECT display_name FROM items WHERE id >= ? ORDER BY id LIMIT 1")
            let span = Double(high - low)
            names = try (0..<sampledNames).compactMap { index in
                try String.fetchOne(next, arguments: [low + Int64(span * Double(index) / Double(sampledNames))])
            }
        }
        guard !names.isEmpty else { return [] }
        var counts: [String: Int] = [:]
        for name in names {
            let tokens = SearchTokenizer.tokens(in: name).map(\.text)
            var phrases: Set<String> = []
            for length in 2...3 where tokens.count >= length {
                for start in 0...(tokens.count - length) {
                    if let phrase = key(phrase: Array(tokens[start..<start + length])) { phrases.insert(phrase) }
                }
            }
            for phrase in phrases { counts[phrase, default: 0] += 1 }
        }
        let scale = Double(items) / Double(names.count), wanted = Double(minimumPhraseDocuments(minimumDocuments)) / 4
        return counts.filter { Double($0.value) * scale >= wanted }.map(\.key).sorted()
    }

    /// Registers the frequent prefixes, stale, for an idle follower to list, leaving the terms' lists as
    /// they are (an index listed by a build without prefix lists).
    static func registerPrefixes(_ db: Database, minimumDocuments: Int = minimumDocuments) throws {
        for (key, documents) in try candidateKeys(minimumDocuments: minimumDocuments, db: db) where token(ofKey: key).isPrefix {
            try register(key, documents: documents, db: db)
        }
    }

    /// A key to list later: stale, with no rows, its document count an estimate until listed.
    static func register(_ key: String, documents: Int, db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO leader_terms (term, documents, rows, name_average, title_average, threshold, stale) VALUES (?, ?, 0, 0, 0, NULL, 1)
            """).execute(arguments: [key, documents])
    }

    /// The terms held by `minimumTermDocuments` rows or more (by default `minimumDocuments`), and the
    /// prefixes (whole scalars, at most ``longestListedPrefix`` bytes) whose terms' document counts add up to
    /// `minimumDocuments`: an upper bound on the rows holding one of them, which listing counts exactly. One
    /// pass over the vocabulary, in FTS5's byte order: a prefix's sum is complete when the terms move past it.
    static func candidateKeys(minimumDocuments: Int, minimumTermDocuments: Int? = nil, db: Database,
                              eachTerm: (UnsafeBufferPointer<UInt8>) throws -> Void = { _ in }) throws -> [(key: String, documents: Int)] {
        let minimumTermDocuments = minimumTermDocuments ?? minimumDocuments
        var keys: [(key: String, documents: Int)] = []
        // The open prefixes of the current term, shortest first: their byte lengths and sums so far.
        var open: [(length: Int, documents: Int)] = []
        var previous: [UInt8] = []
        func close(downTo length: Int) {
            while let last = open.last, last.length > length {
                open.removeLast()
                if last.documents >= minimumDocuments, let key = key(token: String(decoding: previous[..<last.length], as: UTF8.self), isPrefix: true) {
                    keys.append((key, last.documents))
                }
            }
        }
        // Stepped through SQLite's C API, the term read as bytes: a String and a GRDB row per term were most of
        // the pass (686,662 terms).
        let statement = try db.cachedStatement(sql: "SELECT term, doc FROM items_vocab")
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while try SQLiteCall.step(handle, db: db) {
            // A term is never NULL: NULL here is SQLite out of memory.
            guard let text = sqlite3_column_text(handle, 0) else { throw DatabaseError(resultCode: .SQLITE_NOMEM) }
            let bytes = UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, 0)))
            let documents = Int(sqlite3_column_int64(handle, 1))
            try eachTerm(bytes)
            if documents >= minimumTermDocuments, let key = key(token: String(decoding: bytes, as: UTF8.self), isPrefix: false) {
                keys.append((key, documents))
            }
            var common = 0
            while common < Swift.min(bytes.count, previous.count), bytes[common] == previous[common] { common += 1 }
            close(downTo: common)
            previous.removeAll(keepingCapacity: true)
            previous.append(contentsOf: bytes)
            // Open the prefixes this term adds, at each scalar's end (past its continuation bytes).
            var length = 0
            while length < bytes.count {
                length += 1
                while length < bytes.count, bytes[length] & 0xC0 == 0x80 { length += 1 }
                guard length <= longestListedPrefix else { break }
                if length > (open.last?.length ?? 0) { open.append((length, 0)) }
            }
            for index in open.indices { open[index].documents += documents }
        }
        close(downTo: 0)
        return keys
    }

    /// Lists stale terms again, those held by the fewest rows first, until `budget` seconds have passed;
    /// returns how many it listed.
    @discardableResult
    static func refreshStale(_ db: Database, budget: TimeInterval) throws -> Int {
        let start = DispatchTime.now().uptimeNanoseconds
        try saveTouched(db)
        let stale = try String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 1 ORDER BY documents")
        return try relist(stale, db: db) { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 > budget }
    }

    /// Lists keys again, in order, until `stops` says so before one; returns how many it listed.
    static func relist(_ keys: [String], db: Database, stops: () -> Bool = { false }) throws -> Int {
        var listed = 0
        try withoutMemoryMap(db) {
            for key in keys {
                if stops() { break }
                try forget(key, db: db)
                try list(key, minimumDocuments: 1, db: db)
                listed += 1
            }
        }
        if listed > 0 { try bumpGeneration(db) }
        return listed
    }

    /// Runs `body` with the connection reading through its page cache instead of the memory map. Listing
    /// reads a good part of the file once (every row of every frequent term, joined to its item): mapped,
    /// those pages stayed in the process's resident memory (a first export of the full Corpus peaked at
    /// 317 MiB instead of 240).
    static func withoutMemoryMap(_ db: Database, _ body: () throws -> Void) throws {
        let mapped = try Int.fetchOne(db, sql: "PRAGMA mmap_size") ?? 0
        try db.execute(sql: "PRAGMA mmap_size = 0")
        defer { try? db.execute(sql: "PRAGMA mmap_size = \(mapped)") }
        try body()
    }

    /// A new set of lists: every writer's tokenizer watches them from its next transaction on, this one's at once.
    /// A random generation, not a count: a transaction that listed terms and rolled back leaves its tokenizer
    /// watching a generation the file never committed, which a count could reach again with other terms.
    static func bumpGeneration(_ db: Database) throws {
        try db.execute(sql: "UPDATE leader_state SET generation = random() & 9223372036854775807")
        try watch(db)
    }

    /// Lists one term or prefix (its key): scores its rows (pruned to the best ``listedRows`` + 1, with
    /// the ranking's own top-k bound), counting them, and keeps the best with their instances when they
    /// are `minimumDocuments` or more. A token a query would not reach as one token (its normalization is
    /// not idempotent) is not listed: no search would look it up.
    static func list(_ key: String, minimumDocuments: Int, depths: PlacedDepths = .standard, db: Database) throws {
        if let made = try made(key, minimumDocuments: minimumDocuments, depths: depths, db: db) { try save(made, db: db) }
    }

    /// The lists of one key as ``list(_:minimumDocuments:depths:db:)`` writes them, read from `db` alone (a
    /// reader's snapshot will do), or nil when it lists nothing.
    static func made(_ key: String, minimumDocuments: Int, depths: PlacedDepths = .standard, db: Database) throws -> MadeList? {
        let (token, isPrefix) = token(ofKey: key)
        let tokens = tokens(ofKey: key)
        guard SearchTokenizer.tokens(in: token).map(\.text) == tokens, !isPrefix || (tokens.count == 1 && token.utf8.count <= longestListedPrefix) else { return nil }
        let phrase = expression(of: key)
        guard let statistics = try statistics(db) else { return nil }
        // The best rows by the score a query of the term alone gives them, with their instances; the row
        // after the kept ones is the threshold. Rows the ranking pruned return a bound below the kept
        // scores, never among them, and no instances.
        // The placed rows too, best first, far deeper (``PlacedRows``). Pruned to as many as the ranking prunes
        // to, or not at all: scoring every row of the 397 words listed at 939,632 items took no longer than
        // pruning to 65 (4.4–4.6 s against 4.9), the ranking's bound being loose for partial matches. A prefix's
        // 16,384 are past what the ranking prunes to, so its rows are all scored too: listing every prefix at
        // 939,632 items went from 15 s (pruned to 1,025) to 34, in a follower's idle time.
        let placed = depths.rows(isPrefix: isPrefix)
        let scan = try db.cachedStatement(sql: """
            SELECT items_fts.rowid, \(SearchIndex.leaderRankFunction), i.uri, i.latitude, i.longitude
            FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ?
            """)
        // Never shallower than the leader list's own rows and the one left off, which must all be scored.
        let pruned = Swift.max(placed, listedRows) + 1
        scan.setUncheckedArguments(["", pruned <= SearchIndex.maximumPrunedPage ? pruned : 0, phrase])
        var places = PlacedRows(depth: placed)
        // Every placed row, for the tail (see TermLeaders+PlacedTails), until there are too many to keep one.
        var everywhere: [(id: Int64, latitude: Double, longitude: Double)]? = []
        let handle = scan.sqliteStatement
        defer { sqlite3_reset(handle) }
        // In the ranking query's order: score, then URI as SQLite compares text (its bytes). Rows tied with
        // the one left off first are kept by URI, as the query keeps them, so that ties can be told apart.
        typealias Scored = (id: Int64, score: Double, uri: String, instances: Data?)
        var best: [Scored] = []
        func rankingOrder(_ a: Scored, _ b: Scored) -> Bool { a.score != b.score ? a.score > b.score : BinaryCollation.precedes(a.uri, b.uri) }
        best.reserveCapacity(4 * listedRows)
        var floor = -Double.infinity
        // The term's rows as the ranking's IDF counts them (FTS5's, not those joined to an item).
        var documents = 0
        let header = 2 * MemoryLayout<Double>.size
        while try SQLiteCall.step(handle, db: db) {
            let bytes = Int(sqlite3_column_bytes(handle, 1))
            let blob = sqlite3_column_type(handle, 1) == SQLITE_BLOB && bytes >= header ? sqlite3_column_blob(handle, 1) : nil
            let score = -(blob?.loadUnaligned(as: Double.self) ?? sqlite3_column_double(handle, 1))
            if let blob, documents == 0 {
                let frequency = blob.loadUnaligned(fromByteOffset: MemoryLayout<Double>.size, as: Double.self)
                guard frequency.isFinite, frequency >= 1, frequency < Double(Int.max) else { return nil }
                documents = Int(frequency)
            }
            let isPlaced = sqlite3_column_type(handle, 3) != SQLITE_NULL && sqlite3_column_type(handle, 4) != SQLITE_NULL
            if isPlaced, everywhere != nil {
                everywhere?.append((sqlite3_column_int64(handle, 0), sqlite3_column_double(handle, 3), sqlite3_column_double(handle, 4)))
                if everywhere?.count ?? 0 > depths.mostTailRows { everywhere = nil }
            }
            if blob != nil, isPlaced {
                places.add(score: score, id: sqlite3_column_int64(handle, 0), latitude: sqlite3_column_double(handle, 3),
                           longitude: sqlite3_column_double(handle, 4))
            } else if blob == nil {
                places.leaveOff(bound: score)
            }
            guard score >= floor else { continue }
            let instances = blob.map { Data(bytes: $0 + header, count: bytes - header) }
            best.append((sqlite3_column_int64(handle, 0), score, SQLiteCall.text(handle, 2), instances))
            if best.count >= 4 * listedRows {
                best.sort(by: rankingOrder)
                best.removeLast(best.count - (listedRows + 1))
                floor = best[listedRows].score
            }
        }
        guard documents >= minimumDocuments else { return nil }
        best.sort(by: rankingOrder)
        // Every kept row was scored: a pruned one's bound is below `listedRows + 1` scores.
        let leaders = best.prefix(listedRows).compactMap { row in row.instances.map { MadeList.Leader(id: row.id, instances: $0) } }
        guard leaders.count == Swift.min(best.count, listedRows) else { return nil }
        let chunks = places.chunks()
        return MadeList(key: key, documents: documents, rows: statistics.rows, averages: (statistics.averages[0], statistics.averages[1]),
                        threshold: best.count > listedRows ? best[listedRows].score : nil,
                        boundary: best.count > listedRows ? best[listedRows].uri : nil, leaders: leaders,
                        placedThreshold: places.threshold, placedChunks: chunks,
                        tail: tail(of: places, everywhere: everywhere))
    }

    /// Writes what ``made(_:minimumDocuments:depths:db:)`` made: the key's leader list, its placed list and tail.
    static func save(_ made: MadeList, db: Database) throws {
        try db.execute(sql: """
            INSERT INTO leader_terms (term, documents, rows, name_average, title_average, threshold, boundary_uri) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [made.key, made.documents, made.rows, made.averages.name, made.averages.title, made.threshold, made.boundary])
        let insert = try db.cachedStatement(sql: "INSERT INTO term_leaders (term, id, instances) VALUES (?, ?, ?)")
        for row in made.leaders { try insert.execute(arguments: [made.key, row.id, row.instances]) }
        try savePlaces(made, db: db)
        if let tail = made.tail {
            try db.cachedStatement(sql: "INSERT INTO leader_place_tails (term, count, entries) VALUES (?, ?, ?)")
                .execute(arguments: [made.key, tail.count, tail.entries])
        }
    }

    /// FTS5's rows and each column's average length, as the ranking reads them (nil: the index is empty).
    /// Read through FTS5's first row, not a match: a prefix's match merges every term it covers first.
    static func statistics(_ db: Database) throws -> (rows: Int64, averages: [Double])? {
        let sql = "SELECT searchlight_statistics(items_fts) FROM items_fts LIMIT 1"
        guard let blob = try Data.fetchOne(db.cachedStatement(sql: sql)),
              blob.count == 5 * MemoryLayout<Double>.size else { return nil }
        let values = blob.withUnsafeBytes { raw in (0..<5).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: Double.self) } }
        return (Int64(values[0]), Array(values[1...]))
    }
}
