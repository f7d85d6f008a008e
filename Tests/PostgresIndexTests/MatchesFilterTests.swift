#if PostgreSQL
import Foundation
@testable import PostgresIndex
import SearchIndex
import Testing
import TestScratch

/// `MATCHES` in PostgreSQL: decided once per distinct text, then exactly in SQL; for an attribute with too
/// many texts, on every row in Swift. Both keep what SQLite keeps and what a brute force keeps.
@Suite("PostgreSQL MATCHES filters", .serialized, .ownThread)
struct MatchesFilterTests {
    static let store = "MATCHES-STORE"

    /// Items with a code each (distinct texts, in several cases and scripts), a zone shared by many, and
    /// some whose code is a number (a value of another kind under the same name).
    static let items: [IndexedItem] = (0..<90).map { key in
        let codes = ["Alpha", "alpha", "ÄLPHA", "Bravo", "bravo-\(key)", "Charlie \(key)", "東京\(key)", "e\u{301}cho", "écho", "x[y]"]
        var attributes: [String: [FilterValue]] = ["zone": [.string(["Europe/Paris", "Europe/Zurich", "America/New_York"][key % 3])]]
        attributes["code"] = key % 11 == 0 ? [.number(Double(key))] : [.string(codes[key % codes.count] + (key % 4 == 0 ? "" : "-\(key)"))]
        if key % 7 == 0 { attributes["code", default: []].append(.string("Delta")) }
        return IndexedItem(uri: "x-coredata://\(store)/Thing/p\(key)", entity: "Thing", displayName: "thing \(key)",
                           latitude: Double(key % 60), longitude: Double(key), attributes: attributes)
    }

    static let filters = [
        "code MATCHES 'Alpha.*'", "code MATCHES '(?i)alpha.*'", "code MATCHES[c] 'alpha.*'", "code MATCHES[cd] 'alpha.*'",
        "code MATCHES[d] 'echo.*'", "code MATCHES 'e.*'", "code MATCHES '[A-C][a-z]+(-\\\\d+)?'", "code MATCHES '.*[0-9]'",
        "NOT code MATCHES '.*-1.*'", "code MATCHES 'Delta' AND zone MATCHES 'Europe/.*'", "zone MATCHES 'Europe/(Paris|Zurich)' OR code == 'Bravo'",
        "zone MATCHES '.*York'", "code MATCHES 'x\\\\[y\\\\].*'", "code MATCHES '東京.*'", "code MATCHES ''",
        "code MATCHES[c] '\\\\D+'", "NOT code MATCHES[cd] '\\\\W*[A-E].*'",
    ]

    @Test("decided by texts or by rows, PostgreSQL keeps what SQLite and a brute force keep; a capped attribute is decided by rows")
    func sameItems() async throws {
        if let reason = PostgresCluster.unavailability {
            if PostgresCluster.required { Issue.record("SEARCHLIGHT_REQUIRE_POSTGRES=1, but \(reason)") } else { print("skipped: \(reason)") }
            return
        }
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let sqlite = try SearchIndex(path: Scratch.folder.appendingPathComponent("matches-\(UUID().uuidString).searchindex").path, mode: .readWrite(permissions: 0o600))
        let postgres = try await PostgresIndex.open(try PostgresLocation(cluster.url()), creating: true)
        let writer = try await PostgresIndexWriter.open(postgres, storeUUID: Self.store)
        let batch = IndexBatch(upserts: Self.items, checkpoint: StoreCheckpoint(storeUUID: Self.store, storePath: "/stores/m.sqlite", token: 1))
        _ = try sqlite.apply(batch)
        _ = try await writer.apply(batch)
        await writer.close()
        var informative = 0
        for filter in Self.filters {
            var request = SearchRequest(query: nil, limit: 1_000)
            request.filter = filter
            let predicate = try #require(try await postgres.predicate(of: request))
            let brute = Set(Self.items.filter { predicate.isSatisfied(by: $0.attributes) }.map(\.uri))
            let bySQLite = Set(try await sqlite.search(request).hits.map(\.uri))
            let byTexts = Set(try await postgres.search(request).hits.map(\.uri))
            // Every attribute past the cap: no texts read, each row checked in Swift.
            let capped = try await PostgresSearch.matchedTexts(in: predicate, index: postgres, log: nil, mostTexts: 2)
            #expect(capped.isEmpty, "\(filter): \(capped)")
            let rowSearch = PostgresSearch(index: postgres, request: request, log: nil, predicate: predicate, matched: capped)
            let byRows = Set(try await rowSearch.run(nil).hits.map(\.uri))
            #expect(bySQLite == brute, "\(filter): SQLite only \(bySQLite.subtracting(brute).sorted()), brute force only \(brute.subtracting(bySQLite).sorted())")
            #expect(byTexts == brute, "\(filter): by texts only \(byTexts.subtracting(brute).sorted()), brute force only \(brute.subtracting(byTexts).sorted())")
            #expect(byRows == brute, "\(filter): by rows only \(byRows.subtracting(brute).sorted()), brute force only \(brute.subtracting(byRows).sorted())")
            if !brute.isEmpty && brute.count < Self.items.count { informative += 1 }
        }
        #expect(informative >= Self.filters.count - 2)
        // Found past a limit, an attribute's texts are not read again under that limit; under a higher one they are.
        #expect(postgres.attributesPastTextLimit.withLock { $0 } == ["code": 2, "zone": 2])
        var both = SearchRequest(query: nil)
        both.filter = "code MATCHES 'x.*' OR zone MATCHES 'y.*'"
        let log = StatementLog()
        let skipped = try await PostgresSearch.matchedTexts(in: try await postgres.predicate(of: both), index: postgres, log: log, mostTexts: 2)
        #expect(skipped.isEmpty && log.statements.isEmpty)
        // The zone's three texts are read and matched; the code's (more than 30) only below a cap above them.
        var zone = SearchRequest(query: nil)
        zone.filter = "zone MATCHES 'Europe/.*' AND code MATCHES 'Alpha.*'"
        let predicate = try #require(try await postgres.predicate(of: zone))
        let matched = try await PostgresSearch.matchedTexts(in: predicate, index: postgres, log: nil, mostTexts: 3)
        #expect(matched == [PostgresSearch.MatchesKey(attribute: "zone", options: 0, pattern: "Europe/.*"): ["Europe/Paris", "Europe/Zurich"]])
        let all = try await PostgresSearch.matchedTexts(in: predicate, index: postgres, log: nil)
        let codes = Set(Self.items.flatMap { $0.attributes["code"] ?? [] }.compactMap { if case .string(let text) = $0 { text } else { nil } })
        #expect(all[PostgresSearch.MatchesKey(attribute: "code", options: 0, pattern: "Alpha.*")].map(Set.init) == codes.filter { $0.hasPrefix("Alpha") })
        // Explained, the texts' statement is listed first.
        let explained = try await postgres.explain(zone)
        #expect(explained.statements.first?.sql.contains("WITH RECURSIVE texts") == true)
        await postgres.close()
    }
}
#endif
