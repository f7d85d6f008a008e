import Foundation
import GRDB
@testable import SearchIndex

/// Fuzzes the query parser, and checks what it promises: every string is a query FTS5 accepts or a clean error,
/// as typed and as you type.
///
/// Each parsed query's MATCH expression runs against an in-memory FTS5 table with the index's own tokenizer
/// and columns; an FTS5 error there is a crash.
enum QueryTarget {
    static let database = FuzzDatabase.withTokenizer("""
        CREATE VIRTUAL TABLE items_fts USING fts5(display_name, title, text, keywords, tokenize='\(SearchTokenizer.name)');
        INSERT INTO items_fts VALUES ('Zürich', 'Tokyo 東京都', 'New York, 横浜市の港, กรุงเทพมหานคร', 'Straße');
        """)

    static let target = FuzzTarget(name: "query", prepare: { _ = database }) { data in
        let query = String(decoding: data, as: UTF8.self)
        // As typed and as you type (the last word a prefix): both must give FTS5 a valid expression.
        for lastWordIsPrefix in [false, true] {
            guard let parsed = try? QueryParser.parse(query, lastWordIsPrefix: lastWordIsPrefix) else { continue }
            let expression = parsed.expression
            do {
                _ = try database.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM items_fts WHERE items_fts MATCH ?", arguments: [expression])
                }
            } catch {
                fatalError("FTS5 refuses the parsed query's expression \(expression.debugDescription): \(error)")
            }
        }
    }
}
