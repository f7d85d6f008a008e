import Foundation
import CSearchTokenizer
import GRDB
@testable import SearchIndex

/// Fuzzes `searchlight_rank` with what a damaged or hostile index could hand it: value lengths that do
/// not add up, negative, huge or malformed, against documents of any shape. The input's first line is
/// the value lengths, the second the query (optionally a tab and a phrase plan, as hostile as the rest), the
/// rest the text values (separated by U+001F). Every call must return a finite score or an SQLite error,
/// never read outside its buffers; and the query's own plan with each phrase's row count given
/// (`0:1@2`, as the typo tiers pass a leader list's count) must score exactly as counting them.
enum RankTarget {
    static let database = FuzzDatabase.withTokenizer("""
        CREATE TABLE content (id INTEGER PRIMARY KEY, display_name TEXT, title TEXT, text TEXT, keywords TEXT);
        CREATE VIRTUAL TABLE fts USING fts5(display_name, title, text, keywords, content='content', content_rowid='id',
                                            tokenize='\(SearchTokenizer.name)');
        INSERT INTO content VALUES (1, 'Roma', '', 'Rome\u{1F}Rzym', 'IT');
        INSERT INTO fts (rowid, display_name, title, text, keywords) VALUES (1, 'Roma', '', 'Rome\u{1F}Rzym', 'IT');
        """ + (100..<140).map { id in
            // Rows enough that a phrase's row count moves its IDF (with two rows every IDF is the floor).
            let name = ["Roma Nord", "Rome", "Porta", "Santa Roma", "Nord", "a b", "Città", "b", "Porto", "Ro"][id % 10]
            return "INSERT INTO content VALUES (\(id), '\(name)', '', 'x\(id)', ''); INSERT INTO fts (rowid, display_name, title, text, keywords) VALUES (\(id), '\(name)', '', 'x\(id)', '');"
        }.joined(separator: "\n"))

    /// A term leader list's row as a damaged index could hold it: the input's bytes as its instances blob,
    /// the first line as its value lengths. The score is nil (the list is not trusted) or finite.
    static func scoreAsListed(_ data: Data, lengths: String) throws {
        guard let scorer = TermLeaders.scorer(plan: "", documents: 10, rows: 100, averages: [2, 1, 2, 1]) else { return }
        defer { searchlight_scorer_free(scorer) }
        var scratch: [searchlight_instance] = []
        let score = data.withUnsafeBytes { blob in
            Array(lengths.utf8CString).withUnsafeBufferPointer { text in
                text.withMemoryRebound(to: UInt8.self) { text in
                    TermLeaders.score(scorer, instances: blob.baseAddress, bytes: blob.count, lengths: text.baseAddress, rank: 5000, scratch: &scratch)
                }
            }
        }
        if let score, !score.isFinite { fatalError("a listed row scored \(score) for lengths \(lengths.debugDescription)") }
    }

    static let target = FuzzTarget(name: "rank", prepare: { _ = database }) { data in
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let lengths = lines.first ?? "", text = lines.count > 2 ? lines[2] : ""
        let typed = (lines.count > 1 ? lines[1] : "roma").split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let query = try? QueryParser.parse(typed[0]) else { return }
        let hostilePlan = typed.count > 1 ? typed[1] : query.phrasePlan
        do {
            try database.write { db in
                try db.execute(sql: "INSERT INTO content VALUES (2, ?, '', ?, 'IT')", arguments: [text, text])
                try db.execute(sql: "INSERT INTO fts (rowid, display_name, title, text, keywords) VALUES (2, ?, '', ?, 'IT')", arguments: [text, text])
                defer {
                    try? db.execute(sql: "INSERT INTO fts (fts, rowid, display_name, title, text, keywords) VALUES ('delete', 2, ?, '', ?, 'IT')", arguments: [text, text])
                    try? db.execute(sql: "DELETE FROM content WHERE id = 2")
                }
                let scores = try Double.fetchAll(db, sql: "SELECT searchlight_rank(fts, 10.0, 6.0, 2.0, 1.0, 5000.0, ?) FROM fts WHERE fts MATCH ?",
                                                 arguments: [lengths, query.expression])
                for score in scores where !score.isFinite { fatalError("a non-finite score \(score) for lengths \(lengths.debugDescription)") }
                let rank = "searchlight_rank(fts, 10.0, 6.0, 2.0, 1.0, 5000.0, ?, ?, ?)"
                for keep in [0, 1] {
                    let planned = try Double.fetchAll(db, sql: "SELECT \(rank) FROM fts WHERE fts MATCH ?", arguments: [lengths, hostilePlan, keep, query.expression])
                    for score in planned where !score.isFinite { fatalError("a non-finite score \(score) for plan \(hostilePlan.debugDescription)") }
                }
                // Each phrase's rows counted here and given in the plan, as a search gives a list's count
                // (`phrasePlan(documents:)`): the scores must not move.
                var rows: [String: Int] = [:]
                for term in query.required.joined().flatMap({ $0.alternatives.map(\.term) }) + query.excluded {
                    rows[term.expression] = try Int.fetchOne(db, sql: "SELECT count(*) FROM fts WHERE fts MATCH ?", arguments: [term.expression]) ?? 0
                }
                let counted = query.phrasePlan { rows[$0.expression] }
                let sql = "SELECT \(rank) FROM fts WHERE fts MATCH ? ORDER BY rowid"
                let counting = try Double.fetchAll(db, sql: sql, arguments: [lengths, query.phrasePlan, 0, query.expression])
                let given = try Double.fetchAll(db, sql: sql, arguments: [lengths, counted, 0, query.expression])
                guard counting == given else { fatalError("counts given \(counted) scored \(given), counting them \(counting)") }
                try scoreAsListed(data, lengths: lengths)
            }
        } catch let error as DatabaseError where error.resultCode != .SQLITE_MISUSE {
            return // a clean SQLite error
        } catch {
            fatalError("rank: \(error)")
        }
    }
}
