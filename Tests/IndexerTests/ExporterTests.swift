import CoreDataStore
import Foundation
import GRDB
@testable import Indexer
import SearchIndex
import Testing

@Suite("The exporter")
struct ExporterTests {
    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("exporter-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/fixtures/coredata-stores")
    static let fixtures = FileManager.default.fileExists(atPath: shared.appendingPathComponent("SampleModel2_V1.sqlite").path)

    func export(_ path: String, config: IndexConfiguration? = nil, rebuild: Bool = false) throws -> (Exporter.Summary, SearchIndex, [String]) {
        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(config, model: store.model), batchSize: 500)
        var notes: [String] = []
        let summary = try exporter.catchUp(rebuild: rebuild) { notes.append($0) }
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

    @Test("SampleModel2 with zero configuration: every object indexed, incremental saves reflected exactly",
          .enabled(if: Self.fixtures, "../shared/fixtures is absent"))
    func sampleModel2() throws {
        let path = directory.appendingPathComponent("SampleModel2_V1.sqlite").path
        try FileManager.default.copyItem(atPath: Self.shared.appendingPathComponent("SampleModel2_V1.sqlite").path, toPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let names = ["Book": "title", "GraphicNovel": "title", "Feedback": "authorAlias", "Page": "number", "Author": "alias"]
        var (summary, index, _) = try export(path)
        #expect(summary.inserted == 5468 && summary.token == 1)
        #expect(try dump(index) == truth(path, displayName: names))
        let first = try #require(try index.search(SearchRequest(query: "title 13")).hits.first)
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
        (summary, index, _) = try export(path)
        #expect(summary.token == 2)
        #expect(try dump(index) == truth(path, displayName: names))
        #expect(try index.search(SearchRequest(query: "zanzibar")).hits.map(\.uri) == [books[0].objectID.uriRepresentation])
        #expect(try index.search(SearchRequest(query: "\"\(books[0].attributes["title"]?.stringValue ?? "")\"")).hits.allSatisfy { $0.uri != books[0].objectID.uriRepresentation })
        #expect(try index.search(SearchRequest(query: "quokka")).hits.count == 1)
        #expect(try index.checkpoint(storeUUID: "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A")?.token == 2)
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
    func dependents() throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let (writer, countries, _) = try atlas(at: path)
        let config = IndexConfiguration(entities: ["Place": .fields(.init(text: ["country.name"]))])
        var (_, index, _) = try export(path, config: config)
        #expect(try index.count(SearchRequest(query: "japan", entities: ["Place"])) == 15)
        var save = SaveRequest()
        save.update(.saved(countries[0]), attributes: ["name": .string("Nippon")])
        try writer.save(save)
        (_, index, _) = try export(path, config: config)
        #expect(try index.count(SearchRequest(query: "japan", entities: ["Place"])) == 0)
        #expect(try index.count(SearchRequest(query: "nippon", entities: ["Place"])) == 15)
        #expect(try index.search(SearchRequest(near: try Coordinate(latitude: 3, longitude: 1), limit: 1)).hits.first?.displayName == "town3")
    }

    @Test("a removal interrupted half-way is finished and re-exported, never taken for an up-to-date index")
    func interruptedRemoval() throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        _ = try atlas(at: path)
        var (_, index, _) = try export(path)
        let complete = try dump(index)
        let checkpoint = try #require(try index.checkpoint(storeUUID: PersistentStore(path: path).metadata.storeUUID))
        // What a crash between two removal batches leaves: some items gone, the checkpoint marked.
        var marked = checkpoint
        marked.exportState = StoreCheckpoint.removalInProgress
        try index.apply(IndexBatch(deletes: Array(complete.keys.sorted().prefix(10)), checkpoint: marked))
        var notes: [String]
        (_, index, notes) = try export(path)
        #expect(notes.contains { $0.contains("interrupted rebuild") }, "\(notes)")
        #expect(try dump(index) == complete)
        #expect(try index.checkpoint(storeUUID: checkpoint.storeUUID)?.exportState == nil)
    }

    @Test("rebuild triggers: purged history, changed configuration, replaced store; one writer per index")
    func rebuilds() throws {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let (writer, _, places) = try atlas(at: path)
        _ = try export(path)
        for index in 0..<3 {
            var save = SaveRequest()
            save.update(.saved(places[index]), attributes: ["name": .string("renamed\(index)")])
            try writer.save(save)
        }
        try writer.purgeHistory(through: 3)
        var (summary, index, notes) = try export(path)
        #expect(summary.rebuildReason?.contains("history token expired") == true && notes.contains { $0.contains("rebuilding") })
        #expect(try index.count(SearchRequest(query: "renamed2")) == 1)
        (summary, index, notes) = try export(path, config: IndexConfiguration(entities: ["Country": .excluded]))
        #expect(summary.rebuildReason?.contains("configuration") == true)
        #expect(try index.dump().allSatisfy { $0.entity == "Place" })
        // A migration rewrites the model's version hashes (same store UUID): everything is re-exported.
        let migrated = try ManagedObjectModel(entities: try ExpressionTests.model().entities + [
            EntityDescription(name: "Region", attributes: [AttributeDescription(name: "name", type: .string)]),
        ])
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [migrated.storeMetadataPlist()]) }
        try queue.close()
        (summary, index, notes) = try export(path, config: IndexConfiguration(entities: ["Country": .excluded]))
        #expect(summary.rebuildReason?.contains("model changed") == true && notes.contains { $0.contains("migration") })
        #expect(try index.dump().count == 30)
        // The store replaced by another at the same path: the old store's items go.
        try FileManager.default.removeItem(atPath: path)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        _ = try atlas(at: path)
        (summary, index, notes) = try export(path)
        #expect(notes.contains { $0.contains("replaced") })
        #expect(try index.checkpoints().count == 1 && index.dump().count == 32)
        // A second exporter on the same index is refused, naming the first.
        let store = try PersistentStore(path: path)
        let configuration = try ResolvedConfiguration(nil, model: store.model)
        let first = try Exporter(store: store, index: index, configuration: configuration)
        #expect(throws: ExportError.self) { try Exporter(store: store, index: index, configuration: configuration) }
        _ = first
    }
}
