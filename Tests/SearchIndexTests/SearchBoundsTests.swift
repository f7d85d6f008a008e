import Foundation
import GRDB
import GRDBSQLite
@testable import SearchIndex
import Testing

/// A query can never hold the index's read transaction without bound.
@Suite("Search bounds")
struct SearchBoundsTests {
    @Test("an interrupt before the deadline is a cancellation, after it the search was too expensive: also for reads stepped through SQLite's C API")
    func interruptsTold() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE t (x)")
            // An R-tree or dictionary read steps its statement itself and sees SQLITE_INTERRUPT as it is.
            let statement = try db.makeStatement(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n")
            #expect(throws: CancellationError.self) {
                try db.withTimeLimit(60) {
                    _ = try SQLiteCall.step(statement.sqliteStatement, db: db)
                    sqlite3_interrupt(db.sqliteConnection)  // what GRDB does for a cancelled task, mid-statement
                    while try SQLiteCall.step(statement.sqliteStatement, db: db) {}
                }
            }
            sqlite3_reset(statement.sqliteStatement)
            #expect(throws: SearchIndexError.searchTooExpensive(seconds: 0.001)) {
                try db.withTimeLimit(0.001) { while try SQLiteCall.step(statement.sqliteStatement, db: db) {} }
            }
        }
    }

    @Test("repeated terms are searched once: x* OR x* … is x*, tokyo tokyo is tokyo")
    func repeatsCollapse() throws {
        let parsed = try QueryParser.parse(Array(repeating: "x*", count: 32).joined(separator: " OR "))
        #expect(parsed.required.count == 1 && parsed.required[0].count == 1)
        #expect(try QueryParser.parse("tokyo TOKYO Tokyo").required.count == 1)
        #expect(try QueryParser.parse("a OR b a OR b -c -c").required.count == 1)
        #expect(try QueryParser.parse("a OR b a OR b -c -c").excluded.count == 1)
        // Different words stay different.
        #expect(try QueryParser.parse("tok tok* \"tok yo\"").required.count == 3)
    }

    @Test("a search past its time limit stops with a clear error, and the index stays usable")
    func timeLimit() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("bounds.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        let words = (0..<2_000).map { "w\($0)" }
        try index.apply(IndexBatch(upserts: (0..<4_000).map { key in
            IndexFixtures.item(key, "place \(key)", text: [words[key % 2_000], words[(key * 7) % 2_000]],
                               latitude: Double(key % 80), longitude: Double(key % 170))
        }, checkpoint: IndexFixtures.checkpoint(1)))
        let query = (0..<26).map { "w\($0)*" }.joined(separator: " OR ")
        var request = SearchRequest(query: query, near: try Coordinate(latitude: 40, longitude: 80), radius: 20_000_000)
        request.timeLimit = 0.000_001
        #expect(throws: SearchIndexError.searchTooExpensive(seconds: 0.000_001)) { try index.search(request) }
        #expect(throws: SearchIndexError.searchTooExpensive(seconds: 0.000_001)) { try index.count(request) }
        request.timeLimit = SearchRequest.defaultTimeLimit
        #expect(try !index.search(request).hits.isEmpty)
        // A reader's place search stopped inside the R-tree, then the same search in time: the R-tree's
        // statements keep no trace of the interrupt.
        let reader = try SearchIndex(path: path, mode: .readOnly)
        for _ in 0..<3 {
            var places = SearchRequest(near: try Coordinate(latitude: 40, longitude: 80), radius: 20_000_000, limit: 10_000)
            places.timeLimit = 0.000_001
            #expect(throws: SearchIndexError.searchTooExpensive(seconds: 0.000_001)) { try reader.search(places) }
            places.timeLimit = SearchRequest.defaultTimeLimit
            #expect(try reader.search(places).hits.count == 4_000)
            var words = SearchRequest(query: query, limit: 10_000)
            words.timeLimit = 0.000_001
            #expect(throws: SearchIndexError.searchTooExpensive(seconds: 0.000_001)) { try reader.search(words) }
            words.timeLimit = SearchRequest.defaultTimeLimit
            #expect(try !reader.search(words).hits.isEmpty)
        }
    }
}
