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

    @Test("a text holding NUL is indexed, renamed and deleted without leaving a token behind (`vectors` target: its FTS5 delete, given the text cut at the NUL, left tokens behind)")
    func textsWithNUL() throws {
        let index = try PreparedItemTests.newIndex("vectors-nul-\(UUID().uuidString)")
        let item = IndexedItem(uri: "x-coredata://NUL/Place/p1", entity: "Place", displayName: "\u{0}\u{0}d!Rzym", title: "IT", text: ["a\u{0}b"],
                               keywords: ["x\u{0}"], latitude: 1, longitude: 1)
        try index.apply(IndexBatch(upserts: [item], checkpoint: IndexFixtures.checkpoint(1)))
        var request = SearchRequest(query: "rzym b", near: try Coordinate(latitude: 1, longitude: 1), radius: 1_000)
        for plan in [SearchPlan.placeThenText, .intersection] {
            request.forcedPlan = plan
            #expect(try index.search(request).hits.map(\.uri) == [item.uri])
        }
        var renamed = item
        renamed.displayName = "other\u{0}"
        try index.apply(IndexBatch(upserts: [renamed], checkpoint: IndexFixtures.checkpoint(2)))
        try index.apply(IndexBatch(deletes: [item.uri], checkpoint: IndexFixtures.checkpoint(3)))
        try index.write { db in try db.execute(sql: "INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)") }
        #expect(try index.search(SearchRequest(query: "rzym OR other OR b")).hits.isEmpty)
    }
}
