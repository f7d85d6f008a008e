import Dispatch
import Foundation
import Synchronization
@testable import SearchIndex
import Testing
import TestScratch

/// The async pairs of search, count, dump and explain, and parallel reads on a read-only index.
@Suite("Async and parallel search", .ownThread)
struct AsyncSearchTests {
    let path: String

    init() throws {
        path = IndexFixtures.temporaryDirectory().appendingPathComponent("index.searchindex").path
        let writer = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        var items: [IndexedItem] = []
        for number in 1...300 {
            var item = IndexFixtures.item(number, "town \(number)", text: [number % 3 == 0 ? "harbour" : "hill"])
            item.rank = Double(number)
            items.append(item)
        }
        try writer.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(1)))
    }

    static func synchronousAnswers(_ index: SearchIndex, _ request: SearchRequest) throws
        -> (search: SearchResults, count: Int, dump: [IndexedItem], explain: SearchExplanation) {
        (try index.search(request), try index.count(request), try index.dump(), try index.explain(request))
    }

    @Test("a read-only index's reads wait for a lock as long as it was opened to: GRDB's readers have a timeout of their own")
    func readerBusyTimeout() throws {
        let index = try SearchIndex(path: path, mode: .readOnly, busyTimeout: 0.25)
        #expect(try index.read { db in try Int.fetchOne(db, sql: "PRAGMA busy_timeout") } == 250)
    }

    @Test("a cancelled task's async search stops with SearchIndexError.cancelled, not a database error")
    func cancelled() async throws {
        let index = try SearchIndex(path: path, mode: .readOnly)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await index.search(SearchRequest(query: "town"))
        }
        await #expect(throws: SearchIndexError.cancelled) { try await task.value }
        // The index goes on answering.
        #expect(try await index.count(SearchRequest(query: "harbour")) == 100)
    }

    @Test("async search, count, dump and explain answer as their synchronous pairs do")
    func pairs() async throws {
        let index = try SearchIndex(path: path, mode: .readOnly)
        var request = SearchRequest(query: "harbour town")
        request.limit = 7
        // In an async function a call picks the async overload: the synchronous answers come from a
        // synchronous function.
        let sync = try Self.synchronousAnswers(index, request)
        let async = try await index.search(request)
        #expect(async.hits.map(\.uri) == sync.search.hits.map(\.uri) && async.hits.count == 7)
        #expect(try await index.count(request) == sync.count)
        #expect(try await index.dump().map(\.uri) == sync.dump.map(\.uri))
        #expect(try await index.explain(request).parsedQuery?.description == sync.explain.parsedQuery?.description)
        await #expect(throws: SearchIndexError.invalidRequest(.radiusWithoutCenter)) {
            var bad = SearchRequest(query: "town")
            bad.radius = 10
            return try await index.search(bad)
        }
    }

    @Test("a read-only index reads on several connections at once: two reads meet inside their snapshots")
    func parallelReads() throws {
        let index = try SearchIndex(path: path, mode: .readOnly)
        let inside = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let met = Counter()
        let group = DispatchGroup()
        for me in 0..<2 {
            DispatchQueue.global().async(group: group) {
                // Each read waits inside its transaction for the other to be inside its own: on one
                // serialized connection the second never gets in, and the wait times out.
                let saw = try? index.read { _ in
                    inside[me].signal()
                    return inside[1 - me].wait(timeout: .now() + 5) == .success
                }
                if saw == true { met.increment() }
            }
        }
        group.wait()
        #expect(met.value == 2)
    }

    @Test("many concurrent async searches each get the whole, right answer")
    func concurrentSearches() async throws {
        let index = try SearchIndex(path: path, mode: .readOnly)
        let words = ["harbour", "hill", "town", "harbour town", "town 1*", "town 29*"]
        var expected: [String: [String]] = [:]
        for word in words { expected[word] = try await index.search(SearchRequest(query: word)).hits.map(\.uri) }
        let answers = try await withThrowingTaskGroup(of: (String, [String]).self) { group in
            for round in 0..<48 {
                let word = words[round % words.count]
                group.addTask { (word, try await index.search(SearchRequest(query: word)).hits.map(\.uri)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 48)
        #expect(answers.allSatisfy { expected[$0.0] == $0.1 })
    }
}

/// A counter threads share.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
