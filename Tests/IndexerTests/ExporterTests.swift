import CoreDataStore
import CoreDataStoreWriter
import Foundation
import GRDB
@testable import Indexer
import SearchIndex
import Testing
import TestScratch

@Suite("The exporter", .ownThread)
struct ExporterTests {
    let directory: URL = {
        let url = Scratch.folder.appendingPathComponent("exporter-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/fixtures/coredata-stores")
    static let fixtures = FileManager.default.fileExists(atPath: shared.appendingPathComponent("SampleModel2_V1.sqlite").path)

    /// An event as a sentence, for tests that look for words in what a catch-up announced.
    static func sentence(_ event: IndexingEvent) -> String {
        switch event {
        case .rebuildStarted(let store, let reason): "rebuilding \(store.path): \(reason)"
        case .previousStoreRemoved(let store, let previous, let items): "store \(store.path) was replaced (\(previous)): \(items) items removed"
        default: "\(event)"
        }
    }

    func export(_ path: String, config: IndexConfiguration? = nil, rebuild: Bool = false) async throws -> (Exporter.Summary, SearchIndex, [String]) {
        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(config, model: store.model), batchSize: 500)
        var notes: [String] = []
        let summary = try await exporter.catchUp(rebuild: rebuild, events: { notes.append(Self.sentence($0)) })
        return (summary, index, notes)
    }

    /// What the index must hold: every object of an indexed entity, by URI, with its display name.
    func truth(_ path: String, displayName: [String: String]) throws -> [String: String] {
        let store = try PersistentStore(path: path)
        var result: [String: String] = [:]
        try store.read { snapshot throws in
            for (entity, attribute) in displayName {
                for object in try snapshot.objects(ofEntity: entity, limit: 1_000_000, relationships: .toOneOnly) where object.entityName == entity {
                    result[object.objectID.uriRepresentation] = object.attributes[attribute].map { ExpressionValue($0).texts.joined() } ?? ""
                }
            }
        }
        return result
    }

    func dump(_ index: SearchIndex) throws -> [String: String] {
        Dictionary(try index.dump().map { ($0.uri, $0.displayName) }, uniquingKeysWith: { first, _ in first })
    }

    /// A writable copy of Apple's SampleModel2_V1 store in this test's folder.
    func sampleModel2Copy() throws -> String {
        let path = directory.appendingPathComponent("SampleModel2_V1.sqlite").path
        try FileManager.default.copyItem(atPath: Self.shared.appendingPathComponent("SampleModel2_V1.sqlite").path, toPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        return path
    }

    @Test("SampleModel2 with zero configuration: every object indexed, incremental saves reflected exactly",
          .enabled(if: Self.fixtures, "../shared/fixtures is absent"))
    func sampleModel2() async throws {
        let path = try sampleModel2Copy()
        let names = ["Book": "title", "GraphicNovel": "title", "Feedback": "authorAlias", "Page": "number", "Author": "alias"]
        var (summary, index, _) = try await export(path)
        #expect(summary.inserted == 5468 && summary.token == 1)
        #expect(try dump(index) == truth(path, displayName: names))
        let first = try #require(try await index.search(SearchRequest(query: "title 13")).hits.first)
        #expect(first.displayName.hasPrefix("title 13 ") && first.entity == "Book")

        // Saves appended by the writer: renames, deletes, inserts; whatever ZCOLUMNS says.
        let writer = try StoreWriter(path: path)
        let books = try PersistentStore(path: path).read { try $0.objects(ofEntity: "Book", limit: 100) }
        var save = SaveRequest()
        save.update(.saved(books[0].objectID), attributes: ["title": .string("title zanzibar - renamed")])
        save.delete(books[1].objectID)
        if let page = books[2].toMany["pages"]?.first { save.delete(page) }
        save.insert("Book", attributes: ["title": .string("title quokka - new"), "price": .decimal(1), "publishedAt": .date(Date()),
                                         "uniqueID": .uuid(UUID()), "cover": .transformable(Data([1]))],
                    relationships: ["author": .toOne(books[0].toOne["author"].map(ObjectReference.saved))])
        try writer.save(save)
        (summary, index, _) = try await export(path)
        #expect(summary.token == 2)
        #expect(try dump(index) == truth(path, displayName: names))
        #expect(try await index.search(SearchRequest(query: "zanzibar")).hits.map(\.uri) == [books[0].objectID.uriRepresentation])
        #expect(try await index.search(SearchRequest(query: "\"\(books[0].attributes["title"]?.stringValue ?? "")\"")).hits.allSatisfy { $0.uri != books[0].objectID.uriRepresentation })
        #expect(try await index.search(SearchRequest(query: "quokka")).hits.count == 1)
        #expect(try index.checkpoint(storeUUID: "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A")?.token == 2)
    }

    @Test("SampleModel2, Apple-written: a book added for an author leaves its other books alone; the author's alias renamed re-indexes them all",
          .enabled(if: Self.fixtures, "../shared/fixtures is absent"))
    func sampleModel2Dependents() async throws {
        let path = try sampleModel2Copy()
        // Books (and graphic novels, a sub-entity) show their author's alias, kept on Writer, the author's parent.
        let config = IndexConfiguration(entities: ["Book": .fields(.init(displayName: "title", text: ["author.alias"]))])
        _ = try await export(path, config: config)
        let books = try PersistentStore(path: path).read { try $0.objects(ofEntity: "Book", limit: 100) }
        let author = try #require(books.lazy.compactMap { $0.toOne["author"] ?? nil }.first)
        let authored = books.filter { ($0.toOne["author"] ?? nil) == author }.map(\.objectID.uriRepresentation)
        #expect(authored.count > 10, "the fixture's most prolific author")
        let writer = try StoreWriter(path: path)
        var save = SaveRequest()
        save.insert("Book", attributes: ["title": .string("title quokka"), "price": .decimal(1), "publishedAt": .date(Date()),
                                         "uniqueID": .uuid(UUID()), "cover": .transformable(Data([1]))],
                    relationships: ["author": .toOne(.saved(author))])
        let added = try #require(try writer.save(save).insertedObjectIDs.first)
        var (summary, index, _) = try await export(path, config: config)
        // The author changed (its books), but not what its books show of it: only the new book is written.
        #expect(summary.inserted == 1 && summary.updated == 0 && summary.unchanged <= 1, "\(summary)")
        save = SaveRequest()
        save.update(.saved(author), attributes: ["alias": .string("zanzibarian")])
        try writer.save(save)
        (summary, index, _) = try await export(path, config: config)
        // Its books, the new one, and the author's own item (an entity the configuration leaves out is indexed as by default).
        #expect(summary.updated == authored.count + 2, "\(summary)")
        let found = try await index.search(SearchRequest(query: "zanzibarian", limit: 1_000)).hits.map(\.uri)
        #expect(found.count == authored.count + 2 && Set(found) == Set(authored + [added.uriRepresentation, author.uriRepresentation]))
    }

    func atlas(at path: String) throws -> (StoreWriter, [ManagedObjectID], [ManagedObjectID]) {
        let writer = try StoreWriter.create(at: path, model: try ExpressionTests.model())
        var save = SaveRequest()
        let countries = ["Japan", "Schweiz"].map { save.insert("Country", attributes: ["name": .string($0)]) }
        for index in 0..<30 {
            save.insert("Place", attributes: ["name": .string("town\(index)"), "latitude": .double(Double(index)), "longitude": .double(1)],
                        relationships: ["country": .toOne(countries[index % 2])])
        }
        let ids = try writer.save(save).insertedObjectIDs
        return (writer, Array(ids.prefix(2)), Array(ids.dropFirst(2)))
    }

    @Test("a renamed country re-indexes the places that show its name")
    func dependents() async throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let (writer, countries, _) = try atlas(at: path)
        let config = IndexConfiguration(entities: ["Place": .fields(.init(text: ["country.name"]))])
        var (_, index, _) = try await export(path, config: config)
        #expect(try await index.count(SearchRequest(query: "japan", entities: ["Place"])) == 15)
        var save = SaveRequest()
        save.update(.saved(countries[0]), attributes: ["name": .string("Nippon")])
        try writer.save(save)
        (_, index, _) = try await export(path, config: config)
        #expect(try await index.count(SearchRequest(query: "japan", entities: ["Place"])) == 0)
        #expect(try await index.count(SearchRequest(query: "nippon", entities: ["Place"])) == 15)
        #expect(try await index.search(SearchRequest(near: try Coordinate(latitude: 3, longitude: 1), limit: 1)).hits.first?.displayName == "town3")
    }

    @Test("defersDependents off: a country renamed with many pages of places, all re-indexed in one index transaction, never half-visible to a reader")
    func bulkDependents() async throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let writer = try StoreWriter.create(at: path, model: try ExpressionTests.model())
        var save = SaveRequest()
        let countries = ["Japan", "Schweiz"].map { save.insert("Country", attributes: ["name": .string($0)]) }
        for index in 0..<900 {
            save.insert("Place", attributes: ["name": .string("town\(index)"), "latitude": .double(Double(index % 90)), "longitude": .double(1)],
                        relationships: ["country": .toOne(countries[index % 3 == 0 ? 1 : 0])])
        }
        let ids = try writer.save(save).insertedObjectIDs
        let config = try ResolvedConfiguration(IndexConfiguration(entities: ["Place": .fields(.init(text: ["country.name"]))]),
                                               model: try PersistentStore(path: path).model)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
        // Pages of 50 objects: the rename's 600 places span twelve of them.
        var exporter: Exporter? = try Exporter(store: try PersistentStore(path: path), index: index, configuration: config, batchSize: 50)
        // Every batch whole, as asked: by default the places would be walked a page at a time (see below).
        exporter?.defersDependents = false
        _ = try await exporter?.catchUp()
        // The same batch renames Japan, deletes a place of each country and moves one from Schweiz to Japan.
        save = SaveRequest()
        save.update(.saved(ids[0]), attributes: ["name": .string("Nippon")])
        save.delete(ids[2 + 1])
        save.delete(ids[2 + 0])
        save.update(.saved(ids[2 + 3]), relationships: ["country": .toOne(.saved(ids[0]))])
        let token = try #require(try writer.save(save).transactionNumber)
        // A reader counts both names while the follower writes: it sees the store before the save or after it.
        let reader = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        let done = ManagedAtomicFlag()
        let seen = Thread.detachedResult {
            var counts: Set<[Int]> = []
            while !done.isSet {
                // Each count is one read transaction: the old name's, the new name's, either's.
                for query in ["japan", "nippon", "japan OR nippon"] {
                    if let count = try? reader.count(SearchRequest(query: query)) { counts.insert([query.count, count]) }
                }
            }
            return counts
        }
        let summary = try #require(try await exporter?.catchUp())
        done.set()
        exporter = nil
        // The country's own item (Country is indexed by default) moves with its places.
        #expect(summary.token == token && summary.updated == 601 && summary.deleted == 2, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nippon")) == 601)
        #expect(try await index.count(SearchRequest(query: "japan")) == 0)
        #expect(try await index.count(SearchRequest(query: "schweiz")) == 299)
        #expect(try dump(index).count == 900)
        // Before: Japan and 600 places; after: Nippon and 600 (599 + the moved place). Nothing in between.
        #expect(seen.value.isSubset(of: [[5, 0], [5, 601], [6, 0], [6, 601], [15, 601]]) && seen.value.contains([15, 601]), "\(seen.value)")
    }

    @Test("a place joining or leaving a country leaves its other places alone once the country's digest is saved; a rename re-indexes them")
    func shownValues() async throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let (writer, countries, places) = try atlas(at: path)
        let config = IndexConfiguration(entities: ["Place": .fields(.init(text: ["country.name"]))])
        _ = try await export(path, config: config)
        func save(_ change: (inout SaveRequest) -> Void) async throws -> Exporter.Summary {
            var request = SaveRequest()
            change(&request)
            try writer.save(request)
            return try await export(path, config: config).0
        }
        // The export saved each country's digest: a place joining it re-indexes that place and the country.
        var summary = try await save { request in
            for country in countries { request.insert("Place", attributes: ["name": .string("newtown")], relationships: ["country": .toOne(.saved(country))]) }
        }
        #expect(summary.inserted == 2 && summary.unchanged <= 2, "\(summary)")
        // Without a digest (an index from before digests, or an export the app saved during), the first change
        // of a country builds its places again and saves one; the next change does not.
        let queue = try DatabaseQueue(path: path + ".searchindex")
        try await queue.write { db in try db.execute(sql: "DELETE FROM shown_values") }
        try queue.close()
        summary = try await save { $0.insert("Place", attributes: ["name": .string("newishtown")], relationships: ["country": .toOne(.saved(countries[0]))]) }
        #expect(summary.inserted == 1 && summary.unchanged >= 16, "\(summary)")
        summary = try await save { $0.insert("Place", attributes: ["name": .string("newishtown")], relationships: ["country": .toOne(.saved(countries[1]))]) }
        #expect(summary.inserted == 1 && summary.unchanged >= 16, "\(summary)")
        // Now both have digests again: another place joining, or one leaving, re-indexes only that place.
        summary = try await save { $0.insert("Place", attributes: ["name": .string("newertown")], relationships: ["country": .toOne(.saved(countries[0]))]) }
        #expect(summary.inserted == 1 && summary.unchanged <= 2, "\(summary)")
        summary = try await save { $0.update(.saved(places[0]), relationships: ["country": .toOne(.saved(countries[1]))]) }
        #expect(summary.updated == 1 && summary.unchanged <= 3, "\(summary)")
        // A rename changes what the places show: all of them again, and the index says the new name.
        summary = try await save { $0.update(.saved(countries[0]), attributes: ["name": .string("Nippon")]) }
        var (_, index, _) = try await export(path, config: config)
        #expect(summary.updated == 18, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nippon", entities: ["Place"])) == 17)
        #expect(try await index.count(SearchRequest(query: "japan", entities: ["Place"])) == 0)
        // Renamed back: the saved digest is the new name's, so the places follow again.
        summary = try await save { $0.update(.saved(countries[0]), attributes: ["name": .string("Japan")]) }
        (_, index, _) = try await export(path, config: config)
        #expect(try await index.count(SearchRequest(query: "japan", entities: ["Place"])) == 17)
        // Every place's text is its country's name now, read from the store.
        let countryNames = try PersistentStore(path: path).read { snapshot in
            try snapshot.objects(ofEntity: "Place", limit: 1_000, relationships: .toOneOnly).map { place in
                let country = try (place.toOne["country"] ?? nil).flatMap { try snapshot.object($0, relationships: .toOneOnly) }
                return (place.objectID.uriRepresentation, [country?.attributes["name"]?.stringValue ?? ""])
            }
        }
        #expect(try await Dictionary(uniqueKeysWithValues: index.dump(entities: ["Place"]).map { ($0.uri, $0.text) }) == Dictionary(uniqueKeysWithValues: countryNames))
        // A deleted country's digest goes with it.
        let schweiz = countries[1].uriRepresentation
        #expect(try index.shownValues(for: [schweiz]).count == 1)
        _ = try await save { $0.delete(countries[1]) }
        #expect(try index.shownValues(for: [schweiz]).isEmpty)
    }

    @Test("two hops (region.country.name): a region moved to a country named as its old one was, after that one's rename, re-indexes its places")
    func twoHopDigest() async throws {
        let path = directory.appendingPathComponent("regions.sqlite").path
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Country", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "regions", destinationEntityName: "Region", inverseName: "country", isToMany: true)]),
            EntityDescription(name: "Region", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "country", destinationEntityName: "Country", inverseName: "regions"),
                                              RelationshipDescription(name: "places", destinationEntityName: "Place", inverseName: "region", isToMany: true)]),
            EntityDescription(name: "Place", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "region", destinationEntityName: "Region", inverseName: "places")]),
        ])
        let writer = try StoreWriter.create(at: path, model: model)
        var save = SaveRequest()
        let countries = ["Oldland", "Oldland"].map { save.insert("Country", attributes: ["name": .string($0)]) }
        let region = save.insert("Region", attributes: ["name": .string("Upland")], relationships: ["country": .toOne(countries[0])])
        for index in 0..<3 { save.insert("Place", attributes: ["name": .string("village\(index)")], relationships: ["region": .toOne(region)]) }
        let ids = try writer.save(save).insertedObjectIDs
        let config = IndexConfiguration(entities: ["Place": .fields(.init(text: ["region.country.name"]))])
        _ = try await export(path, config: config)
        // The first country renamed: the region's places show the new name (the region's own digest still
        // describes the old one).
        save = SaveRequest()
        save.update(.saved(ids[0]), attributes: ["name": .string("Newland")])
        try writer.save(save)
        var (_, index, _) = try await export(path, config: config)
        #expect(try await index.count(SearchRequest(query: "newland", entities: ["Place"])) == 3)
        // The region moved to the other country, named as the first one was: its places show that name again.
        save = SaveRequest()
        save.update(.saved(ids[2]), relationships: ["country": .toOne(.saved(ids[1]))])
        try writer.save(save)
        (_, index, _) = try await export(path, config: config)
        #expect(try await index.count(SearchRequest(query: "oldland", entities: ["Place"])) == 3)
        #expect(try await index.count(SearchRequest(query: "newland", entities: ["Place"])) == 0)
    }

    @Test("a damaged digest (any type, any bytes) only makes a catch-up re-index the dependents", arguments: ["x'00ff'", "7", "NULL", "'forged'"])
    func damagedDigest(value: String) async throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let (writer, countries, _) = try atlas(at: path)
        let config = IndexConfiguration(entities: ["Place": .fields(.init(text: ["country.name"]))])
        _ = try await export(path, config: config)
        let queue = try DatabaseQueue(path: path + ".searchindex")
        // NOT NULL kept by SQLite: a NULL digest is written as a missing row, the rest in place.
        try await queue.write { db in
            try db.execute(sql: value == "NULL" ? "DELETE FROM shown_values" : "UPDATE shown_values SET digest = \(value)")
        }
        try queue.close()
        var save = SaveRequest()
        save.update(.saved(countries[0]), attributes: ["name": .string("Nippon")])
        try writer.save(save)
        let (summary, index, _) = try await export(path, config: config)
        #expect(summary.updated == 16, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nippon", entities: ["Place"])) == 15)
    }

    @Test("a backlog that costs more than re-exporting the store switches to a rebuild, says why, and ends equal to the store")
    func backlogRebuilds() async throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let (writer, countries, _) = try atlas(at: path)
        let config = try ResolvedConfiguration(IndexConfiguration(entities: ["Place": .fields(.init(text: ["country.name"]))]),
                                               model: try PersistentStore(path: path).model)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
        func exporter() throws -> Exporter {
            let exporter = try Exporter(store: try PersistentStore(path: path), index: index, configuration: config, batchSize: 20)
            exporter.rebuildPolicy.minimumSeconds = 0
            exporter.rebuildPolicy.minimumChanges = 100
            return exporter
        }
        _ = try await exporter().catchUp()
        // 300 renames while nobody followed: each re-indexes half the places, 32 objects in all.
        for round in 0..<300 {
            var save = SaveRequest()
            save.update(.saved(countries[round % 2]), attributes: ["name": .string("Land\(round)")])
            try writer.save(save)
        }
        var notes: [String] = []
        let summary = try await exporter().catchUp(events: { notes.append(Self.sentence($0)) })
        #expect(summary.rebuildReason?.description.contains("catching up would take") == true, "\(summary)")
        #expect(notes.contains { $0.contains("rebuilding") && $0.contains("re-exporting the store's 32 objects") }, "\(notes)")
        #expect(summary.token == 301)
        #expect(try await index.count(SearchRequest(query: "land298", entities: ["Place"])) == 15)
        #expect(try await index.count(SearchRequest(query: "land299", entities: ["Place"])) == 15)
        #expect(try await index.count(SearchRequest(query: "land297", entities: ["Place"])) == 0)
        // Nothing left to do, and below the policy's minimum a backlog is caught up, never rebuilt.
        let again = try await exporter().catchUp()
        #expect(again.rebuildReason == nil && again.inserted + again.updated + again.deleted == 0)
        var save = SaveRequest()
        save.update(.saved(countries[0]), attributes: ["name": .string("Final")])
        try writer.save(save)
        let small = try await exporter().catchUp()
        #expect(small.rebuildReason == nil && small.updated == 16, "\(small)")
    }

    @Test("the rebuild policy: judged only after its minimum time and backlog, rebuilds when the rest costs more than the store")
    func rebuildPolicy() {
        let policy = RebuildPolicy()
        func estimate(_ elapsed: Double, done: Int, left: Int, written: Int, objects: Int) -> RebuildPolicy.Estimate {
            RebuildPolicy.Estimate(elapsed: elapsed, changesDone: done, changesLeft: left, itemsWritten: written, objectCount: objects)
        }
        // 2 s for 1,000 of 10,000 changes (18 s left) against 40,000 objects at 10,000 items/s (4 s): rebuild.
        #expect(policy.prefersRebuild(estimate(2, done: 1_000, left: 9_000, written: 20_000, objects: 40_000)))
        // The same after half a second: too early to judge.
        #expect(!policy.prefersRebuild(estimate(0.5, done: 250, left: 9_750, written: 5_000, objects: 40_000)))
        // 18 s left against 12 s of rebuild: within the factor, keep catching up.
        #expect(!policy.prefersRebuild(estimate(2, done: 1_000, left: 9_000, written: 20_000, objects: 120_000)))
        // A backlog below the minimum, or nothing measured yet: never.
        #expect(!policy.prefersRebuild(estimate(5, done: 100, left: 1_000, written: 10, objects: 1_000_000)))
        #expect(!policy.prefersRebuild(estimate(5, done: 0, left: 9_000, written: 0, objects: 40)))
    }

    @Test("a removal interrupted half-way is finished and re-exported, never taken for an up-to-date index")
    func interruptedRemoval() async throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        _ = try atlas(at: path)
        var (_, index, _) = try await export(path)
        let complete = try dump(index)
        let checkpoint = try #require(try index.checkpoint(storeUUID: PersistentStore(path: path).metadata.storeUUID))
        // What a crash between two removal batches leaves: some items gone, the checkpoint marked.
        var marked = checkpoint
        marked.exportState = StoreCheckpoint.removalInProgress
        try index.apply(IndexBatch(deletes: Array(complete.keys.sorted().prefix(10)), checkpoint: marked))
        var notes: [String]
        (_, index, notes) = try await export(path)
        #expect(notes.contains { $0.contains("interrupted rebuild") }, "\(notes)")
        #expect(try dump(index) == complete)
        #expect(try index.checkpoint(storeUUID: checkpoint.storeUUID)?.exportState == nil)
    }

    @Test("rebuild triggers: purged history, changed configuration, replaced store; one writer per index")
    func rebuilds() async throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let (writer, _, places) = try atlas(at: path)
        _ = try await export(path)
        for index in 0..<3 {
            var save = SaveRequest()
            save.update(.saved(places[index]), attributes: ["name": .string("renamed\(index)")])
            try writer.save(save)
        }
        try writer.purgeHistory(through: 3)
        var (summary, index, notes) = try await export(path)
        #expect(summary.rebuildReason?.description.contains("history token expired") == true && notes.contains { $0.contains("rebuilding") })
        #expect(try await index.count(SearchRequest(query: "renamed2")) == 1)
        (summary, index, notes) = try await export(path, config: IndexConfiguration(entities: ["Country": .excluded]))
        #expect(summary.rebuildReason?.description.contains("configuration") == true)
        #expect(try await index.dump().allSatisfy { $0.entity == "Place" })
        // A migration rewrites the model's version hashes (same store UUID): everything is re-exported.
        let migrated = try ManagedObjectModel(entities: try ExpressionTests.model().entities + [
            EntityDescription(name: "Region", attributes: [AttributeDescription(name: "name", type: .string)]),
        ])
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [migrated.storeMetadataPlist()]) }
        try queue.close()
        (summary, index, notes) = try await export(path, config: IndexConfiguration(entities: ["Country": .excluded]))
        #expect(summary.rebuildReason?.description.contains("model changed") == true && notes.contains { $0.contains("migration") })
        #expect(try await index.dump().count == 30)
        // The store replaced by another at the same path: the old store's items go.
        try FileManager.default.removeItem(atPath: path)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        _ = try atlas(at: path)
        (summary, index, notes) = try await export(path)
        #expect(notes.contains { $0.contains("replaced") })
        #expect(try index.checkpoints().count == 1)
        #expect(try await index.dump().count == 32)
        // A second exporter on the same index is refused, naming the first.
        let store = try PersistentStore(path: path)
        let configuration = try ResolvedConfiguration(nil, model: store.model)
        let first = try Exporter(store: store, index: index, configuration: configuration)
        #expect(throws: ExportError.self) { try Exporter(store: store, index: index, configuration: configuration) }
        // The holder is this process: the message says so instead of blaming "another process".
        do {
            _ = try Exporter(store: store, index: index, configuration: configuration)
            Issue.record("a second exporter was allowed")
        } catch {
            #expect(error.description.contains("this process already writes this index"), "\(error)")
        }
        _ = first
    }
}

/// A flag one thread sets and another polls.
final class ManagedAtomicFlag: @unchecked Sendable {
    // Safe: `value` is read and written only under `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

extension Thread {
    /// Runs `body` on a new thread; `value` waits for its result.
    static func detachedResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
        let result = ThreadResult<T>()
        Thread { result.store(body()) }.start()
        return result
    }
}

/// The result of ``Thread/detachedResult(_:)``.
final class ThreadResult<T: Sendable>: @unchecked Sendable {
    // Safe: `result` is written once under `condition` and read under it.
    private let condition = NSCondition()
    private var result: T?
    func store(_ value: T) {
        condition.withLock {
            result = value
            condition.broadcast()
        }
    }
    var value: T {
        condition.withLock {
            while true {
                if let result { return result }
                condition.wait()
            }
        }
    }
}
