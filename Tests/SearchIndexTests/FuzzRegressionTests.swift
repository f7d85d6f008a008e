import Foundation
@testable import SearchIndex
import Testing

/// Inputs the fuzz targets (`scripts/fuzz`) found, minimized and inlined, each pinned by a test.
@Suite("Fuzz regressions: queries")
struct QueryFuzzRegressionTests {
    /// `scripts/fuzz query`: `a"` followed by U+0319 (61 22 CC 99). The quote and the combining mark form one
    /// `Character`, so the lexer does not see a quote and the FTS5 quoting does not double it: the expression is
    /// `"a"̙"` and FTS5 fails with "unterminated string", which the search reports as a database error.
    @Test("a quote joined to a combining mark is quoted for FTS5")
    func joinedQuote() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("index.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "a")], checkpoint: IndexFixtures.checkpoint(1)))
        let query = String(decoding: [0x61, 0x22, 0xCC, 0x99] as [UInt8], as: UTF8.self)
        do {
            _ = try index.search(SearchRequest(query: query))
        } catch .invalidQuery {
            // A clean refusal keeps the promise too.
        } catch {
            Issue.record("\(error)")
        }
    }
}
