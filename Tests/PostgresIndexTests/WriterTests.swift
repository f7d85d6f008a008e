#if PostgreSQL
import Foundation
@testable import PostgresIndex
import PostgresNIO
import SearchIndex
import Testing
import TestScratch

/// One writer per store, enforced by the database; every batch with its checkpoint, exactly once.
@Suite("PostgreSQL writers", .serialized, .ownThread)
struct WriterTests {
    static func item(_ store: String, _ key: Int, _ name: String) -> IndexedItem {
        IndexedItem(uri: "x-coredata://\(store)/Thing/p\(key)", entity: "Thing", displayName: name, latitude: 10, longitude: Double(key % 180))
    }

    static func batch(_ store: String, token: Int64, upserts: [IndexedItem] = [], deletes: [String] = []) -> IndexBatch {
        IndexBatch(upserts: upserts, deletes: deletes, checkpoint: StoreCheckpoint(storeUUID: store, storePath: "/stores/\(store).sqlite", token: token))
    }

    @Test("a second writer of a store is refused by the database and named; other stores write beside it; a closed writer frees its store")
    func oneWriterPerStore() async throws {
        guard let cluster = try Self.cluster() else { return }
        defer { cluster.stop() }
        let location = try PostgresLocation(cluster.url())
        let index = try await PostgresIndex.open(location, creating: true)
        let first = try await PostgresIndexWriter.open(index, storeUUID: "STORE-A")
        let refused = await Self.failure { _ = try await PostgresIndexWriter.open(index, storeUUID: "STORE-A") }
        guard case .writerActive(let uuid, let holder)? = refused else { Issue.record("not refused: \(String(describing: refused))"); return }
        #expect(uuid == "STORE-A")
        #expect(holder?.contains("server process") == true)
        #expect(refused?.description.contains("another exporter is writing store STORE-A") == true)
        let other = try await PostgresIndexWriter.open(index, storeUUID: "STORE-B")
        _ = try await other.apply(Self.batch("STORE-B", token: 1, upserts: [Self.item("STORE-B", 1, "beside")]))
        await first.close()
        let again = try await PostgresIndexWriter.open(index, storeUUID: "STORE-A")
        _ = try await again.apply(Self.batch("STORE-A", token: 1, upserts: [Self.item("STORE-A", 1, "after")]))
        #expect(try await index.checkpoints().map(\.storeUUID) == ["STORE-A", "STORE-B"])
        await again.close()
        // A writer dropped without close() frees its store as its connection closes.
        do { _ = try await PostgresIndexWriter.open(index, storeUUID: "STORE-C") }
        var reopened: PostgresIndexWriter?
        for _ in 0..<100 where reopened == nil {
            reopened = try? await PostgresIndexWriter.open(index, storeUUID: "STORE-C")
            if reopened == nil { try await Task.sleep(nanoseconds: 50_000_000) }
        }
        #expect(reopened != nil)
        await reopened?.close()
        await other.close()
        await index.close()
    }

    @Test("inserts, updates, unchanged items and deletes are counted; the checkpoint moves with them; removing a store removes its items")
    func batches() async throws {
        guard let cluster = try Self.cluster() else { return }
        defer { cluster.stop() }
        let index = try await PostgresIndex.open(try PostgresLocation(cluster.url()), creating: true)
        let writer = try await PostgresIndexWriter.open(index, storeUUID: "S")
        let items = (1...5).map { Self.item("S", $0, "item \($0)") }
        #expect(try await writer.apply(Self.batch("S", token: 3, upserts: items)) == BatchResult(inserted: 5))
        var renamed = items[1]
        renamed.displayName = "renamed"
        let result = try await writer.apply(Self.batch("S", token: 4, upserts: [items[0], renamed], deletes: [items[4].uri, "x-coredata://S/Thing/p99"]))
        #expect(result == BatchResult(updated: 1, deleted: 1, unchanged: 1))
        #expect(try await index.checkpoint(storeUUID: "S")?.token == 4)
        #expect(try await index.dump().map(\.displayName) == ["item 1", "renamed", "item 3", "item 4"])
        var search = SearchRequest(query: "renamed")
        search.typoTolerance = false
        #expect(try await index.search(search).hits.map(\.uri) == [renamed.uri])
        #expect(try await index.statistics().itemsPerEntity == ["Thing": 4])
        // NUL, which PostgreSQL's text cannot hold, is stored as U+FFFD: the batch is written (not refused
        // on every retry), the item found by its words and its attribute.
        var nul = Self.item("S", 6, "nul\u{0}name")
        nul.text = ["inside\u{0}text"]
        nul.attributes = ["tag": [.string("a\u{0}b")]]
        #expect(try await writer.apply(Self.batch("S", token: 5, upserts: [nul])) == BatchResult(inserted: 1))
        search.query = "inside"
        #expect(try await index.search(search).hits.map(\.uri) == [nul.uri])
        var tagged = SearchRequest(query: nil)
        tagged.filter = "tag == 'a\u{FFFD}b'"
        #expect(try await index.search(tagged).hits.map(\.uri) == [nul.uri])
        #expect(try await index.dump().last?.displayName == "nul\u{FFFD}name")
        #expect(try await writer.removeStore(uuid: "S") == 5)
        #expect(try await index.dump().isEmpty)
        #expect(try await index.checkpoint(storeUUID: "S") == nil)
        await writer.close()
        await index.close()
    }

    @Test("items updated in place (text, place, attributes, or all) hold exactly what a database written fresh with them holds")
    func updatesInPlace() async throws {
        guard let cluster = try Self.cluster() else { return }
        defer { cluster.stop() }
        try cluster.createDatabase("fresh")
        func tagged(_ key: Int, _ name: String, country: String, population: Double?) -> IndexedItem {
            var item = Self.item("S", key, name)
            item.text = ["a place in \(country)"]
            item.attributes = ["country": [.string(country)]]
            if let population { item.attributes["population"] = [.number(population)] }
            return item
        }
        let first = [tagged(1, "alpha", country: "FR", population: 10), tagged(2, "beta", country: "DE", population: 20),
                     tagged(3, "gamma", country: "DE", population: nil), tagged(4, "delta", country: "IT", population: 40),
                     tagged(6, "zeta", country: "Caf\u{E9}", population: 60)]
        var last = first
        last[0].text = ["a place in France"]                                      // text only: attribute rows kept
        last[1].attributes = ["country": [.string("AT")], "population": [.number(21)]]  // attributes only
        last[2].latitude = -33.9                                                   // place only
        last[3] = tagged(4, "delta renamed", country: "CH", population: nil)      // everything, one attribute fewer
        last[4].attributes["country"] = [.string("Cafe\u{301}")]                  // the same text to Swift's ==, other bytes
        let index = try await PostgresIndex.open(try PostgresLocation(cluster.url()), creating: true)
        let writer = try await PostgresIndexWriter.open(index, storeUUID: "S")
        #expect(try await writer.apply(Self.batch("S", token: 1, upserts: first)) == BatchResult(inserted: 5))
        // Which attribute rows a batch wrote: PostgreSQL's row versions (`xmin`) of each item's rows.
        func versions() async throws -> [String: String] {
            try await index.rows("SELECT uri, string_agg(xmin::text, ',' ORDER BY name) FROM searchlight_attributes GROUP BY uri")
                .reduce(into: [:]) { result, row in
                    let (uri, version) = try PostgresIndex.decode(row, as: (String, String).self)
                    result[uri] = version
                }
        }
        let before = try await versions()
        #expect(try await writer.apply(Self.batch("S", token: 2, upserts: last + [Self.item("S", 5, "epsilon")])) == BatchResult(inserted: 1, updated: 5))
        // The text and the place changed, not the attributes: their rows were left as they were.
        let after = try await versions()
        #expect(after[last[0].uri] == before[last[0].uri] && after[last[2].uri] == before[last[2].uri])
        #expect(after[last[1].uri] != before[last[1].uri] && after[last[4].uri] != before[last[4].uri])
        let fresh = try await PostgresIndex.open(try PostgresLocation(cluster.url("fresh")), creating: true)
        let freshWriter = try await PostgresIndexWriter.open(fresh, storeUUID: "S")
        _ = try await freshWriter.apply(Self.batch("S", token: 2, upserts: last + [Self.item("S", 5, "epsilon")]))
        // Every column of every item, every attribute row, and the ranking's statistics.
        let queries = [
            "SELECT uri, store_uuid, entity, display_name, title, text, keywords, latitude, longitude, ST_AsText(place) AS place, date, rank, value_lengths, attributes, digest, name_positions, title_positions, text_positions, keyword_positions, terms::text AS terms, generation FROM searchlight_items ORDER BY uri",
            "SELECT uri, name, kind, number, text, text_c, text_d, text_cd FROM searchlight_attributes ORDER BY uri, name, kind, number, text",
            "SELECT items, name_positions, title_positions, text_positions, keyword_positions FROM searchlight_stores",
        ]
        for sql in queries {
            let updated = try await index.rows(sql).map { row in row.map { String(describing: $0.bytes.map { Array($0.readableBytesView) }) } }
            let expected = try await fresh.rows(sql).map { row in row.map { String(describing: $0.bytes.map { Array($0.readableBytesView) }) } }
            #expect(updated == expected, "\(sql.prefix(40))")
            #expect(!updated.isEmpty)
        }
        for (filter, uris) in [("country == 'FR'", [last[0].uri]), ("country == 'DE'", [last[2].uri]), ("country == 'AT'", [last[1].uri]),
                               ("population > 15", [last[1].uri, last[4].uri]), ("country == 'IT'", []), ("country == 'Cafe\u{301}'", [last[4].uri])] {
            var request = SearchRequest(query: nil)
            request.filter = filter
            #expect(try await index.search(request).hits.map(\.uri).sorted() == uris, "\(filter)")
        }
        var near = SearchRequest(near: try Coordinate(latitude: -33.9, longitude: 3), radius: 1_000)
        near.limit = 10
        #expect(try await index.search(near).hits.map(\.uri) == [last[2].uri])
        await writer.close()
        await freshWriter.close()
        await index.close()
        await fresh.close()
    }

    @Test("a rebuild keeps the store searchable until its sweep removes what was not written again; a checkpoint moved by someone else stops the writer")
    func rebuildAndSweep() async throws {
        guard let cluster = try Self.cluster() else { return }
        defer { cluster.stop() }
        let index = try await PostgresIndex.open(try PostgresLocation(cluster.url()), creating: true)
        let writer = try await PostgresIndexWriter.open(index, storeUUID: "S")
        let items = (1...5).map { Self.item("S", $0, "harbour \($0)") }
        _ = try await writer.apply(Self.batch("S", token: 1, upserts: items))
        var request = SearchRequest(query: "harbour", limit: 50)
        request.typoTolerance = false
        try await writer.beginRebuild(storeUUID: "S")
        // Objects 4 and 5 are gone: the rebuild writes 1 to 3 again (3 changed, updated in place); the old
        // items answer until the sweep, which keeps the changed one.
        var changed = items[2]
        changed.displayName = "harbour three"
        var again = Self.batch("S", token: 1, upserts: Array(items.prefix(2)) + [changed])
        again.marksRebuild = true
        #expect(try await writer.apply(again) == BatchResult(updated: 1, unchanged: 2))
        #expect(try await index.search(request).hits.count == 5)
        let swept = try await writer.sweep(keeping: StoreCheckpoint(storeUUID: "S", storePath: "/stores/S.sqlite", token: 2))
        #expect(swept == 2)
        #expect(try await index.search(request).hits.map(\.uri).sorted() == items.prefix(3).map(\.uri).sorted())
        #expect(try await index.dump().map(\.displayName) == ["harbour 1", "harbour 2", "harbour three"])
        #expect(try await index.checkpoint(storeUUID: "S")?.token == 2)
        // The ranking's statistics follow: three items left.
        let counted = try await index.value("SELECT items FROM searchlight_stores WHERE uuid = 'S'", as: Int64.self)
        #expect(counted == 3)
        // Another process moved the checkpoint (a writer that did not hold the lock): nothing more is written.
        _ = try await index.rows("UPDATE searchlight_stores SET token = 99 WHERE uuid = 'S'")
        let moved = await Self.failure { _ = try await writer.apply(Self.batch("S", token: 3, upserts: [Self.item("S", 9, "late")])) }
        #expect(moved == .checkpointMoved(storeUUID: "S", expected: 2, found: 99))
        #expect(try await index.search(SearchRequest(query: "late")).hits.isEmpty)
        // Items of a store the writer did not claim are refused, whatever the batch's checkpoint says.
        let foreign = await Self.failure { _ = try await writer.apply(Self.batch("OTHER", token: 1, upserts: [Self.item("OTHER", 1, "x")])) }
        guard case .misuse(let message)? = foreign, message.contains("not claimed") else { Issue.record("\(String(describing: foreign))"); return }
        await writer.close()
        await index.close()
    }

    @Test("a schema-1 database is migrated to the current schema by the first writer, its checkpoints kept")
    func migration() async throws {
        guard let cluster = try Self.cluster() else { return }
        defer { cluster.stop() }
        let location = try PostgresLocation(cluster.url())
        // Schema 1 as a build of the time created it, with a store's checkpoint.
        let connection = try await Self.database(atSchema: 1, location)
        try await PostgresIndex.execute("INSERT INTO searchlight_stores (uuid, path, token, updated_at) VALUES ('S', '/stores/S.sqlite', 7, 0)", on: connection)
        try await connection.close()
        let reader = try await PostgresIndex.open(location, creating: false)
        // A reader reads it as it is (status says schema 1); the first writer migrates it.
        #expect(try await reader.statistics().schemaVersion == 1)
        #expect(try await reader.checkpoint(storeUUID: "S")?.token == 7)
        // Searches need what schema 3 added: refused with the way to migrate, not a missing table.
        let old = await Self.failure { _ = try await reader.search(SearchRequest(query: "tokyo")) }
        #expect(old == .schemaTooOld(found: 1, needed: PostgresIndex.schemaVersion))
        #expect(old?.description.contains("run `searchctl index` with this build once") == true)
        await reader.close()
        let index = try await PostgresIndex.open(location, creating: true)
        #expect(try await index.statistics().schemaVersion == PostgresIndex.schemaVersion)
        let writer = try await PostgresIndexWriter.open(index, storeUUID: "S")
        try await writer.beginRebuild(storeUUID: "S")
        #expect(try await writer.apply(Self.batch("S", token: 8, upserts: [Self.item("S", 1, "after the migration")])) == BatchResult(inserted: 1))
        #expect(try await index.checkpoint(storeUUID: "S")?.token == 8)
        await writer.close()
        await index.close()
    }

    @Test("schema 2 to 3: items' attributes and terms are read out of the rows, so filters and typos work on what was indexed before")
    func attributesMigration() async throws {
        guard let cluster = try Self.cluster() else { return }
        defer { cluster.stop() }
        let location = try PostgresLocation(cluster.url())
        let connection = try await Self.database(atSchema: 2, location)
        // An item as schema 2 wrote it: attributes only in their canonical text (SearchIndex.encoded), an empty list among them.
        // Malformed values (a number that is not one, an unknown kind, a pair without '=') are left out, not fatal.
        let attributes = "bad=nfoo\u{1E}x1\u{1E}d\u{1D}country=sJP\u{1E}sAsia\u{1D}empty=\u{1D}founded=d-10000000000.0\u{1D}junk\u{1D}population=n13960000.0\u{1E}ninf"
        var bindings = PostgresBindings()
        bindings.append(attributes)
        _ = try await PostgresIndex.rows("""
            INSERT INTO searchlight_items (uri, store_uuid, entity, display_name, title, text, keywords, rank, value_lengths, attributes, digest,
                                           name_positions, title_positions, text_positions, keyword_positions, terms)
            VALUES ('x-coredata://S/Place/p1', 'S', 'Place', 'Tokyo', '', '', '', 0, '1 0||', $1, 'd', 1, 0, 0, 0, '''tokyo'':1A')
            """, bindings, on: connection)
        try await connection.close()
        let index = try await PostgresIndex.open(location, creating: true)
        #expect(try await index.statistics().schemaVersion == PostgresIndex.schemaVersion)
        #expect(try await index.attributeNames() == ["population", "country", "founded"])
        for (filter, hits) in [("population > 1e7", 1), ("country == 'Asia' AND country == 'JP'", 1), ("founded < CAST('1700-01-01T00:00:00Z', 'NSDate')", 1),
                               ("population < 1e7", 0), ("country BEGINSWITH 'j'", 0), ("country BEGINSWITH[c] 'j'", 1)] {
            var request = SearchRequest(query: nil)
            request.filter = filter
            #expect(try await index.search(request).hits.count == hits, "\(filter)")
        }
        let typo = try await index.search(SearchRequest(query: "tokyoo"))
        #expect(typo.hits.map(\.typos) == [1])
        await index.close()
    }

    @Test("a reader refuses a database without an index and an unreachable server, with the fix in the message")
    func readerErrors() async throws {
        guard let cluster = try Self.cluster() else { return }
        defer { cluster.stop() }
        let location = try PostgresLocation(cluster.url())
        let empty = await Self.failure { _ = try await PostgresIndex.open(location, creating: false) }
        #expect(empty == .notAnIndex(location: location.description))
        // A database that is not UTF-8 (a C-locale initdb's default) is refused with how to create one.
        let connection = try await PostgresIndex.connect(location)
        try await PostgresIndex.execute("CREATE DATABASE ascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0", on: connection)
        try await connection.close()
        let ascii = try PostgresLocation(cluster.url("ascii"))
        let encoded = await Self.failure { _ = try await PostgresIndex.open(ascii, creating: true) }
        #expect(encoded == .notUTF8(location: ascii.description, encoding: "SQL_ASCII"))
        #expect(encoded?.description.contains("createdb -E UTF8") == true)
        #expect(empty?.description.contains("searchctl index --store S --index postgres://") == true)
        let closed = try PostgresLocation("postgres://nobody@127.0.0.1:\(try PostgresCluster.freePort())/none")
        let unreachable = await Self.failure { _ = try await PostgresIndex.open(closed, creating: false) }
        guard case .unreachable? = unreachable else { Issue.record("connected to a closed port: \(String(describing: unreachable))"); return }
        // A database or role the server does not have is the location's mistake, not the network's: no retry helps.
        for wrong in [cluster.url("nosuchdatabase"), "postgres://nosuchrole@127.0.0.1:\(cluster.port)/searchlight"] {
            let refused = await Self.failure { _ = try await PostgresIndex.open(try PostgresLocation(wrong), creating: false) }
            guard case .refused? = refused else { Issue.record("\(wrong): \(String(describing: refused))"); continue }
            #expect(refused?.description.contains("check the user, password and database") == true)
        }
    }

    @Test("a streaming replica answers searches and shows, per store, the token it has replayed")
    func replica() async throws {
        guard let primary = try Self.cluster() else { return }
        defer { primary.stop() }
        let index = try await PostgresIndex.open(try PostgresLocation(primary.url()), creating: true)
        let writer = try await PostgresIndexWriter.open(index, storeUUID: "S")
        _ = try await writer.apply(Self.batch("S", token: 1, upserts: [Self.item("S", 1, "harbour lights")]))
        let replica = try PostgresCluster(replicaOf: primary)
        defer { replica.stop() }
        let reader = try await PostgresIndex.open(try PostgresLocation(replica.url()), creating: false)
        var request = SearchRequest(query: "harbour")
        request.typoTolerance = false
        #expect(try await reader.search(request).hits.map(\.uri) == ["x-coredata://S/Thing/p1"])
        // A later batch reaches the replica by streaming: its token and its items together.
        _ = try await writer.apply(Self.batch("S", token: 2, upserts: [Self.item("S", 2, "lighthouse keeper")]))
        let deadline = Date().addingTimeInterval(20)
        while try await reader.checkpoint(storeUUID: "S")?.token != 2, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(try await reader.checkpoint(storeUUID: "S")?.token == 2)
        request.query = "lighthouse"
        #expect(try await reader.search(request).hits.map(\.uri) == ["x-coredata://S/Thing/p2"])
        // The replica is read-only: a writer there is refused by the server, not by Searchlight.
        let refused = await Self.failure { _ = try await PostgresIndex.open(try PostgresLocation(replica.url()), creating: true) }
        guard case .server? = refused else { Issue.record("a writer opened on a replica: \(String(describing: refused))"); return }
        await reader.close()
        await writer.close()
        await index.close()
    }

    @Test("locations: what is read, what is refused")
    func locations() throws {
        let location = try PostgresLocation("postgres://app:s%40cret@db.example:6543/search%20index")
        #expect(location.user == "app" && location.password == "s@cret" && location.host == "db.example" && location.port == 6543)
        #expect(location.database == "search index")
        #expect(location.description == "postgres://app@db.example:6543/search index")
        #expect(try PostgresLocation("postgresql://u@h/d").port == 5432)
        for bad in ["postgres://h/d", "postgres://u@/d", "postgres://u@h", "postgres://u@h:0/d", "postgres://u@h:99999/d", "file.searchindex", "postgres://u@h/a/b", "postgres://u@h/d%00x", "postgres://u%0A@h/d"] {
            #expect(throws: PostgresIndexError.self, "\(bad)") { _ = try PostgresLocation(bad) }
        }
        // A refused location is repeated without its password.
        for secret in ["postgres://app:hunter2@db:99999/d", "postgres://app:hu@nter2@db/", "postgres://app:hunter2@/d"] {
            do { _ = try PostgresLocation(secret); Issue.record("accepted \(secret)") } catch {
                #expect(!error.description.contains("hunter2") && !error.description.contains("nter2"), "\(error)")
            }
        }
    }

    /// The error a body throws, or nil when it succeeds.
    /// A connection to a database holding schema `version` as a build of its time created it.
    static func database(atSchema version: Int, _ location: PostgresLocation) async throws -> PostgresConnection {
        let connection = try await PostgresIndex.connect(location)
        try await PostgresIndex.execute("CREATE TABLE searchlight_schema (version integer NOT NULL)", on: connection)
        try await PostgresIndex.execute(PostgresIndex.migrations[0..<version].joined() + "INSERT INTO searchlight_schema (version) VALUES (\(version))", on: connection)
        return connection
    }

    static func failure(_ body: () async throws -> Void) async -> PostgresIndexError? {
        do { try await body() } catch { return error as? PostgresIndexError ?? .server(message: "\(error)", sqlState: nil) }
        return nil
    }

    /// A cluster, or nil (the test skipped; failed under SEARCHLIGHT_REQUIRE_POSTGRES=1) when PostgreSQL is missing.
    static func cluster() throws -> PostgresCluster? {
        if let reason = PostgresCluster.unavailability {
            if PostgresCluster.required { Issue.record("SEARCHLIGHT_REQUIRE_POSTGRES=1, but \(reason)") } else { print("skipped: \(reason)") }
            return nil
        }
        return try PostgresCluster()
    }
}
#endif
