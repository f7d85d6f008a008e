import GRDB
@testable import SearchIndex

/// In-memory databases for targets that need FTS5 with the index's own tokenizer and ranking function.
enum FuzzDatabase {
    /// An in-memory database with the `searchlight` tokenizer and `searchlight_rank` registered and `schema` executed; a
    /// failure here is the harness's, reported once before any input.
    static func withTokenizer(_ schema: String) -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try SearchTokenizer.register(on: db)
            try SearchTokenizer.registerRanking(on: db)
        }
        do {
            let queue = try DatabaseQueue(configuration: configuration)
            try queue.write { db in try db.execute(sql: schema) }
            return queue
        } catch {
            fatalError("searchlight-fuzz: cannot create the FTS5 table: \(error)")
        }
    }
}
