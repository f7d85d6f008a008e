import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

extension TermLeaders {
    /// The largest score a partial match reaches per unit of IDF, at the largest finite rank.
    static let largestPartialImpact = searchlight_partial_ceiling(.greatestFiniteMagnitude)

    /// A list's rows with what a hit and the scorer need of their items.
    static let listSQL = """
        SELECT l.id, l.instances, i.uri, i.entity, i.display_name, i.latitude, i.longitude, i.rank, i.value_lengths
        FROM term_leaders l JOIN items i ON i.id = l.id WHERE l.term = ?
        """

    /// A leader list read and scored now: its rows best first, and what proves a row left off comes after a
    /// given one.
    struct Listing {
        /// The listed rows, scored with the index's statistics now, in the ranking query's order.
        var rows: [SearchCandidate]
        /// The best score a row left off can have now; nil when every row holding the term is listed.
        var bound: Double?
        /// A whole-value threshold (the first row left off then, whose score has not moved since) and that
        /// row's URI: rows tied with it come after it by URI.
        var wholeValueThreshold: Double?, boundaryURI: String?
        /// The best score any partial match of the term can have now.
        var partialBound: Double
        /// The rows holding the term (exact while the list is not stale).
        var documents: Int

        /// Whether every row left off the list comes after a row scoring `score` (with `penalty` subtracted
        /// from what the list scores: a typo tier's edits) whose URI is `uri`, in the ranking query's order.
        func leavesOffAfter(score: Double, uri: String, penalty: Double = 0) -> Bool {
            guard let bound else { return true }
            func above(_ bound: Double) -> Bool { TermLeaders.exceeds(score, bound, penalty: penalty) }
            // Or a tie with the first row left off, a whole-value match: its score has not moved (a change of
            // its rank would have made the list stale), rows tied with it left off come after it by URI, and
            // the row given comes before it. Equal scores are the same computation on the same inputs; less a
            // penalty, two scores a hair apart may round to one, so a tier's ties prove nothing.
            let tied = penalty == 0 && wholeValueThreshold.map { score == $0 } == true
                && boundaryURI.map { BinaryCollation.precedes(uri, $0) } == true
                && above(partialBound)
            return above(bound) || tied
        }
    }

    /// The page `offset..<offset + limit` of a search for one term or prefix alone (its key), scored from
    /// its leader list; nil when the list cannot prove it is the page full scoring gives (no list, a stale
    /// one, a page deeper than it, or a row left off that could reach the page).
    static func page(key: String, plan: String, offset: Int, limit: Int, db: Database) throws -> [SearchCandidate]? {
        let needed = offset.addingReportingOverflow(limit)
        guard limit > 0, !needed.overflow, needed.partialValue <= listedRows, let list = try listing(key: key, plan: plan, db: db) else { return nil }
        let candidates = list.rows
        if list.bound != nil {
            guard candidates.count >= needed.partialValue else { return nil }
            let last = candidates[needed.partialValue - 1]
            guard list.leavesOffAfter(score: last.score, uri: last.uri) else { return nil }
        }
        guard offset < candidates.count else { return [] }
        return Array(candidates[offset..<Swift.min(candidates.count, needed.partialValue)])
    }

    /// The leader list of a term or prefix (its key), its rows scored now for it alone with `plan`; nil
    /// when there is none, it is stale, or damaged.
    static func listing(key: String, plan: String, db: Database) throws -> Listing? {
        guard let list = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT documents, rows, name_average, title_average, threshold, boundary_uri FROM leader_terms WHERE term = ? AND stale = 0
            """), arguments: [key]) else { return nil }
        guard let drift = try Drift(list, db: db) else { return nil }
        let documents = drift.documents, threshold = drift.threshold
        // A boundary that is not text proves no tie: the list then answers only above its threshold.
        let boundary = (try? list.optionalText(5)) ?? nil

        let statement = try db.cachedStatement(sql: listSQL)
        statement.setUncheckedArguments([key])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        guard let scorer = scorer(plan: plan, documents: documents, rows: drift.rows, averages: drift.averages,
                                  phraseSize: tokens(ofKey: key).count) else { return nil }
        defer { searchlight_scorer_free(scorer) }
        var candidates: [SearchCandidate] = []
        var instances: [searchlight_instance] = []
        while try SQLiteCall.step(handle, db: db) {
            guard let score = score(scorer, instances: sqlite3_column_blob(handle, 1), bytes: Int(sqlite3_column_bytes(handle, 1)),
                                    lengths: sqlite3_column_text(handle, 8), rank: sqlite3_column_double(handle, 7), scratch: &instances)
            else { return nil }
            candidates.append(SearchCandidate(id: sqlite3_column_int64(handle, 0), uri: SQLiteCall.text(handle, 2), entity: SQLiteCall.text(handle, 3),
                                              displayName: SQLiteCall.text(handle, 4), latitude: SQLiteCall.optionalDouble(handle, 5),
                                              longitude: SQLiteCall.optionalDouble(handle, 6), score: score))
        }
        // The ranking query's order: score, then URI as SQLite compares text (its bytes).
        candidates.sort(by: SearchCandidate.ranksBefore)
        return Listing(rows: candidates, bound: threshold.map(drift.bound),
                       wholeValueThreshold: threshold.flatMap { $0 >= SEARCHLIGHT_WHOLE_VALUE_SCORE ? $0 : nil },
                       boundaryURI: boundary, partialBound: drift.partialBound, documents: documents)
    }

    /// The row count of one key whose list is not stale, or nil: a prepared statement kept by the connection
    /// (typo tolerance asks it of every expansion it checks).
    static func documents(ofKey key: String, db: Database) throws -> Int? {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT documents FROM leader_terms WHERE stale = 0 AND term = ?"), arguments: [key])
    }

    /// The row counts of the keys (words, prefixes and phrases, ``key(token:isPrefix:)``, ``key(phrase:)``) whose lists are not stale
    /// (exact then), by key.
    static func documents(ofKeys keys: Set<String>, db: Database) throws -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        let sql = "SELECT term, documents FROM leader_terms WHERE stale = 0 AND term IN (\(databaseQuestionMarks(count: keys.count)))"
        var documents: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(Array(keys))) { documents[try row.text(0)] = Int(try row.integer(1)) }
        return documents
    }

    /// What a list's scores then tell of scores now: the term's rows, FTS5's rows and the display name's and
    /// title's average lengths then and now. A list's rows and its placed rows are bounded by it alike.
    struct Drift {
        let documents: Int, rowsThen: Int64, rows: Int64
        let listedAverages: [Double], averages: [Double]
        /// The list's threshold: the best score of a row left off, then (nil: every row listed).
        let threshold: Double?

        /// Reads a `leader_terms` row's `documents, rows, name_average, title_average` and a threshold, the
        /// statement's first five columns, with the index's statistics now; nil when the row is damaged (an
        /// infinite or NaN threshold or average proves nothing) or the index is empty.
        init?(_ row: Row, db: Database) throws {
            documents = Int(try row.integer(0))
            rowsThen = try row.integer(1)
            listedAverages = [try row.number(2), try row.number(3)]
            threshold = try row.optionalNumber(4)
            guard documents > 0, rowsThen > 0, (listedAverages + [threshold ?? 0]).allSatisfy({ $0.isFinite && $0 >= 0 }),
                  let statistics = try TermLeaders.statistics(db), statistics.averages.count == 4 else { return nil }
            rows = statistics.rows
            averages = statistics.averages
        }

        /// The best score a row that scored at most `threshold` when listed can have now. A whole-value
        /// match's score depends on nothing that changed (its rank would have marked the list stale). A
        /// partial match's is its IDF times a per-row part, in which only the display name's and title's
        /// average lengths moved: a column's length norm shrinks at most by the ratio of the new average to
        /// the old, and k1-saturation grows less than its argument, so the part grows at most by that ratio.
        /// The IDF is that of the same documents among today's rows.
        func bound(_ threshold: Double) -> Double {
            if threshold >= SEARCHLIGHT_WHOLE_VALUE_SCORE { return Swift.max(threshold, partialBound) }
            return threshold / idf(documents: documents, rows: rowsThen) * idf(documents: documents, rows: rows) * growth
        }

        /// The best score any partial match of the term can have now.
        var partialBound: Double { idf(documents: documents, rows: rows) * largestPartialImpact * growth }

        /// How much a partial match's per-row part can have grown since the listing: the largest ratio of a
        /// column's average length now to then.
        var growth: Double {
            var ratio = 1.0
            for column in 0..<2 where listedAverages[column] > 0 { ratio = Swift.max(ratio, averages[column] / listedAverages[column]) }
            return ratio
        }
    }

    /// Whether `score` (with `penalty` added back: a typo tier's edits) is above `bound`, with a margin for
    /// rounding: the bound and the scores are computed in different orders, and the penalty moves a score to
    /// where a double holds fewer of its digits.
    static func exceeds(_ score: Double, _ bound: Double, penalty: Double = 0) -> Bool {
        score + penalty > bound + 1e-9 * Swift.max(1, abs(bound)) + 4 * penalty.ulp
    }

    /// The ranking's IDF (`searchlight_idf`, the scorer's own).
    static func idf(documents: Int, rows: Int64) -> Double { searchlight_idf(Double(documents), rows) }

    /// One listed row's score from what the list and its item keep: its instances (a
    /// `searchlight_leader_rank`'s triples), value lengths and rank. Nil when any of them is damaged, or the
    /// lengths do not size every column (items written before schema 4's second format, which the ranking
    /// sizes by asking FTS5, and a list cannot).
    static func score(_ scorer: OpaquePointer, instances blob: UnsafeRawPointer?, bytes: Int, lengths: UnsafePointer<UInt8>?, rank: Double,
                      scratch instances: inout [searchlight_instance]) -> Double? {
        guard decode(blob, bytes: bytes, into: &instances), let lengths else { return nil }
        var sizes = [Int32](repeating: 0, count: Int(SEARCHLIGHT_RANK_COLUMNS))
        return lengths.withMemoryRebound(to: CChar.self, capacity: 1) { lengths in
            guard searchlight_value_lengths_sizes(lengths, &sizes) != 0 else { return nil }
            var score = 0.0
            let status = searchlight_scorer_score(scorer, instances, Int32(instances.count), sizes, 1, lengths, rank, SearchIndex.columnWeights, &score)
            return status == SQLITE_OK ? score : nil
        }
    }

    /// The scorer of a list's one phrase (`phraseSize` tokens: a phrase's instance covers them all).
    static func scorer(plan: String, documents: Int, rows: Int64, averages: [Double], phraseSize: Int = 1) -> OpaquePointer? {
        // Bounded as the scorer bounds a column: a phrase longer than any column covers it whole.
        let sizes: [Int32] = [Int32(Swift.min(Swift.max(phraseSize, 1), 1 << 20))], frequencies = [Double(documents)]
        return plan.withCString { plan in searchlight_scorer_create(1, sizes, frequencies, rows, averages, plan) }
    }

    /// Reads instance triples: one phrase (0), a ranked column, a position; false when damaged.
    private static func decode(_ blob: UnsafeRawPointer?, bytes: Int, into instances: inout [searchlight_instance]) -> Bool {
        instances.removeAll(keepingCapacity: true)
        let stride = 3 * MemoryLayout<Int32>.size
        guard bytes % stride == 0, bytes == 0 || blob != nil else { return false }
        for index in 0..<(bytes / stride) {
            guard let blob else { return false }
            let phrase = blob.loadUnaligned(fromByteOffset: index * stride, as: Int32.self)
            let column = blob.loadUnaligned(fromByteOffset: index * stride + 4, as: Int32.self)
            let offset = blob.loadUnaligned(fromByteOffset: index * stride + 8, as: Int32.self)
            guard phrase == 0, column >= 0, column < SEARCHLIGHT_RANK_COLUMNS, offset >= 0 else { return false }
            instances.append(searchlight_instance(phrase: phrase, column: column, offset: offset))
        }
        return true
    }
}
