@testable import CoreDataStore
import Foundation
import Testing

@Suite("Models from .xcdatamodel files", .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
struct ModelFileTests {
    /// Counts what an XML model declares, with plain string scanning independent of the loader.
    struct Declared: Equatable, CustomStringConvertible {
        var entities: [String: [Int]] = [:] // name → [attributes, relationships, fetched properties]
        var description: String { entities.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }

    static func declared(in xml: String) -> Declared {
        var result = Declared()
        var current: String?
        var depthInComposite = false
        for rawLine in xml.components(separatedBy: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("<composite ") { depthInComposite = true }
            if line.hasPrefix("</composite>") { depthInComposite = false }
            if line.hasPrefix("<entity "), let name = attribute("name", in: line) {
                current = name
                result.entities[name] = [0, 0, 0]
                if line.hasSuffix("/>") { current = nil }
            } else if line.hasPrefix("</entity>") {
                current = nil
            } else if let entity = current, !depthInComposite {
                if line.hasPrefix("<attribute ") { result.entities[entity]?[0] += 1 }
                if line.hasPrefix("<relationship ") { result.entities[entity]?[1] += 1 }
                if line.hasPrefix("<fetchedProperty ") { result.entities[entity]?[2] += 1 }
            }
        }
        return result
    }

    static func attribute(_ name: String, in line: String) -> String? {
        guard let range = line.range(of: " \(name)=\"") else { return nil }
        let rest = line[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    static func modelFiles() throws -> [URL] {
        let manager = FileManager.default
        var files: [URL] = []
        for folder in try manager.contentsOfDirectory(atPath: Fixtures.models.path).sorted() {
            let directory = Fixtures.models.appendingPathComponent(folder)
            guard (try? directory.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true else { continue }
            for file in try manager.contentsOfDirectory(atPath: directory.path).sorted() where file == "contents" || file.hasSuffix("__contents") {
                files.append(directory.appendingPathComponent(file))
            }
        }
        return files
    }

    @Test("all 26 real models load, with the entity and property counts their XML declares")
    func everyModelLoads() throws {
        let currentModels = try Self.modelFiles().filter { $0.lastPathComponent == "contents" }
        #expect(currentModels.count == 26)
        for file in try Self.modelFiles() {
            let model = try ManagedObjectModel(contentsOf: file.path)
            let expected = Self.declared(in: try String(contentsOf: file, encoding: .utf8))
            var actual = Declared()
            for entity in model.entities {
                actual.entities[entity.name] = [entity.attributes.count, entity.relationships.count, entity.fetchedPropertyNames.count]
            }
            #expect(actual == expected, "\(file.path)")
            #expect(model.source == .modelFile(path: file.path))
        }
    }

    @Test("details survive: inheritance, abstract, flags, inverses, ordered, fetch indexes, uniqueness, userInfo")
    func details() throws {
        let sample = try ManagedObjectModel(contentsOf: Fixtures.models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel/contents").path)
        #expect(sample.entities.map(\.name) == ["Car", "ExpensiveSportCar", "Person", "SportCar"])
        #expect(sample.entity(named: "ExpensiveSportCar")?.superentityName == "SportCar")
        #expect(sample.rootEntityName(of: "ExpensiveSportCar") == "Car")
        #expect(sample.entityNumbers == ["Car": 1, "SportCar": 2, "ExpensiveSportCar": 3, "Person": 4])
        let person = try #require(sample.entity(named: "Person"))
        #expect(person.attributes.first { $0.name == "id" }?.preservesValueInHistoryOnDeletion == true)
        #expect(person.attributes.first { $0.name == "isDriving" }?.isTransient == true)
        #expect(person.uniquenessConstraints == [["firstName", "lastName"]])
        #expect(person.relationships.first?.isToMany == true)
        #expect(sample.inverse(of: try #require(person.relationships.first))?.name == "owner")
        #expect(sample.versionIdentifiers == ["1"])

        let version2 = try ManagedObjectModel(contentsOf: Fixtures.models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel/SampleModel2.xcdatamodel__contents").path)
        #expect(version2.entity(named: "LuxuryCar")?.renamingIdentifier == "ExpensiveSportCar")
        #expect(version2.entity(named: "Car")?.fetchIndexes == [FetchIndexDescription(name: "byMakerAndNumberPlate", elements: [
            .init(propertyName: "maker"), .init(propertyName: "numberPlate"),
        ])])

        let ordered = try ManagedObjectModel(contentsOf: Fixtures.models.appendingPathComponent("3lvis__Sync__151-ordered-many-to-many/contents").path)
        let orderedRelationships = ordered.entities.flatMap(\.relationships).filter(\.isOrdered)
        #expect(!orderedRelationships.isEmpty)

        let warden = try ManagedObjectModel(contentsOf: Fixtures.models.appendingPathComponent("SidhuK__WardenApp__wardenDataModel/contents").path)
        #expect(warden.marksSpotlightProperties)
    }

    @Test("an .xcdatamodeld bundle opens its current version; a missing .xccurrentversion falls back to the newest name")
    func bundles() throws {
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Fixtures.models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel")
        let bundle = directory.appendingPathComponent("SampleModel.xcdatamodeld")
        for version in ["SampleModel", "SampleModel2", "SampleModel3"] {
            let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source.appendingPathComponent("\(version).xcdatamodel__contents"), to: folder.appendingPathComponent("contents"))
        }
        try FileManager.default.copyItem(at: source.appendingPathComponent(".xccurrentversion"), to: bundle.appendingPathComponent(".xccurrentversion"))
        #expect(try ManagedObjectModel(contentsOf: bundle.path).versionIdentifiers == ["1"])
        #expect(try ManagedObjectModel(contentsOf: bundle.appendingPathComponent("SampleModel2.xcdatamodel").path).entity(named: "LuxuryCar") != nil)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent(".xccurrentversion"))
        #expect(try ManagedObjectModel(contentsOf: bundle.path).versionIdentifiers == ["3"])
    }

    @Test("unreadable model files give clear errors")
    func badModelFiles() throws {
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let garbage = directory.appendingPathComponent("contents")
        try Data("<model><entity name=\"A\"".utf8).write(to: garbage)
        #expect(throws: CoreDataStoreError.self) { try ManagedObjectModel(contentsOf: garbage.path) }
        try Data("<plist/>".utf8).write(to: garbage)
        #expect(throws: CoreDataStoreError.self) { try ManagedObjectModel(contentsOf: garbage.path) }
        try Data("<model><entity name=\"A\" parentEntity=\"Missing\"/></model>".utf8).write(to: garbage)
        #expect(throws: CoreDataStoreError.invalidModelFile(path: garbage.path, reason: "invalid model: entity A names a parent entity Missing that does not exist")) {
            try ManagedObjectModel(contentsOf: garbage.path)
        }
        #expect(throws: CoreDataStoreError.fileNotFound(path: "/nonexistent/Model.xcdatamodeld")) {
            try ManagedObjectModel(contentsOf: "/nonexistent/Model.xcdatamodeld")
        }
    }
}
