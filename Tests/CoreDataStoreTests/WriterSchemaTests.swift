import CoreDataStoreWriter
@testable import CoreDataStore
import Foundation
import GRDB
import Testing

@Suite("Writer: Core Data's DDL", .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
struct WriterSchemaTests {
    let directory = Fixtures.temporaryDirectory()

    static func schema(of path: String) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path, configuration: configuration).read { db in
            try String.fetchAll(db, sql: "SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || COALESCE(sql, '') FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY rowid")
        }
    }

    @Test("a store created from the model in Apple's Z_MODELCACHE has exactly Apple's DDL", arguments: Fixtures.storeNames)
    func identicalDDL(name: String) throws {
        let original = try PersistentStore(path: Fixtures.copyStore(name, to: directory))
        let path = directory.appendingPathComponent("new-\(name).sqlite").path
        let writer = try StoreWriter.create(at: path, model: original.model, storeUUID: original.metadata.storeUUID,
                                            historyTracking: original.hasHistory)
        #expect(try writer.integrityCheck() == "ok")
        let apple = try Self.schema(of: original.path)
        let ours = try Self.schema(of: path)
        #expect(Set(ours) == Set(apple))
        if name != "SampleModel_V2" { // V2 was migrated in place, which reorders sqlite_master
            #expect(ours == apple)
        }
        // And the new store reads back with the same model and numbering.
        let reread = try PersistentStore(path: path)
        #expect(reread.model.source == .modelCache)
        #expect(reread.layout.entityNumbers == original.layout.entityNumbers)
        #expect(reread.model.entities.map(\.name) == original.model.entities.map(\.name))
        for entity in original.model.entities {
            let mine = try #require(reread.model.entity(named: entity.name))
            #expect(mine.attributes.map(\.name) == entity.attributes.map(\.name))
            #expect(mine.attributes.map(\.type) == entity.attributes.map(\.type))
            #expect(mine.relationships.map(\.name) == entity.relationships.map(\.name))
            #expect(mine.relationships.map(\.inverseName) == entity.relationships.map(\.inverseName))
            #expect(mine.relationships.map(\.isToMany) == entity.relationships.map(\.isToMany))
            #expect(mine.uniquenessConstraints == entity.uniquenessConstraints)
            #expect(mine.fetchIndexes == entity.fetchIndexes)
            #expect(mine.isAbstract == entity.isAbstract && mine.superentityName == entity.superentityName)
        }
        #expect(reread.metadata.versionHashesDigest == StoreMetadata.digest(of: reread.metadata.versionHashes))
        #expect(reread.hasHistory == original.hasHistory)
    }

    @Test("the model archive written to Z_MODELCACHE decodes to an equal model for every real model file")
    func modelCacheRoundTrip() throws {
        for file in try ModelFileTests.modelFiles() {
            let model = try ManagedObjectModel(contentsOf: file.path)
            let decoded = try ManagedObjectModel(modelCache: model.modelCacheContent())
            for entity in model.entities {
                var expected = entity
                // Composite elements are flattened into columns, not archived.
                expected.attributes = expected.attributes.map { var a = $0; a.compositeElements = []; a.derivationExpression = nil; return a }
                #expect(decoded.entity(named: entity.name) == expected, "\(file.lastPathComponent) \(entity.name)")
            }
            #expect(decoded.versionIdentifiers == model.versionIdentifiers)
        }
    }

    @Test("every real model lays out into a store that passes integrity_check and reads back")
    func everyModelCreatesAStore() throws {
        for (index, file) in try ModelFileTests.modelFiles().filter({ $0.lastPathComponent == "contents" }).enumerated() {
            let model = try ManagedObjectModel(contentsOf: file.path)
            let path = directory.appendingPathComponent("model-\(index).sqlite").path
            let writer = try StoreWriter.create(at: path, model: model)
            #expect(try writer.integrityCheck() == "ok", "\(file.path)")
            let store = try PersistentStore(path: path)
            #expect(store.hasHistory)
            for entity in model.entities {
                #expect(try store.read { try $0.count(ofEntity: entity.name) } == 0)
            }
        }
    }
}
