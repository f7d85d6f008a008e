import CoreDataStore
import CoreDataStoreWriter
import Foundation
@testable import Indexer
import Testing

/// The expansion stage alone: which indexed objects show a changed one, on a store the writer made.
@Suite("Expanding a batch to its dependents")
struct DependentExpansionTests {
    @Test("a country's places show it, in both directions of the configuration; a place shows nothing; an empty country has no dependents")
    func dependents() throws {
        let (_, path, writer) = try TestFolder.atlasStore("expansion")
        var save = SaveRequest()
        let countries = ["Japan", "Schweiz", "Nowhere"].map { save.insert("Country", attributes: ["name": .string($0)]) }
        for index in 0..<9 {
            save.insert("Place", attributes: ["name": .string("town\(index)")], relationships: ["country": .toOne(countries[index % 2])])
        }
        let ids = try writer.save(save).insertedObjectIDs
        let (japan, schweiz, nowhere) = (ids[0], ids[1], ids[2])
        let places = Array(ids[3...])
        let store = try PersistentStore(path: path)
        // Places show their country's name; countries show their places' names.
        let configuration = try ResolvedConfiguration(IndexConfiguration(entities: [
            "Place": .fields(.init(displayName: "name", text: ["country.name"])),
            "Country": .fields(.init(displayName: "name", text: ["places.name"])),
        ]), model: store.model)
        let builder = ItemBuilder(configuration: configuration, functions: .standard)
        let expansion = DependentExpansion(configuration: configuration,
                                           digests: ShownValueDigests(configuration: configuration, dependencies: builder.dependencies()))
        try store.read { snapshot throws in
            #expect(try expansion.dependents(of: [japan], in: snapshot) == Set(places.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)))
            #expect(try expansion.dependents(of: [japan, schweiz], in: snapshot) == Set(places))
            #expect(try expansion.dependents(of: [places[1]], in: snapshot) == [schweiz])
            #expect(try expansion.dependents(of: [nowhere], in: snapshot).isEmpty)
            #expect(try expansion.dependents(of: [], in: snapshot).isEmpty)
        }
        // A digest reads a country without its places (most changed countries' digests are equal, and
        // their places are not needed); those expanded are read again with them.
        try store.read { snapshot throws in
            let read = try expansion.digests.objects([japan], in: snapshot)
            #expect(read.count == 1 && read.first?.toMany["places"] == nil)
            let expanding = try expansion.digests.withFirstInverses(read, in: snapshot)
            #expect(expanding.first?.toMany["places"].map(Set.init) == Set(places.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)))
        }
        // Nothing shows what no key path reaches.
        let alone = try ResolvedConfiguration(IndexConfiguration(entities: ["Place": .fields(.init(displayName: "name"))]), model: store.model)
        let none = DependentExpansion(configuration: alone, digests: ShownValueDigests(
            configuration: alone, dependencies: ItemBuilder(configuration: alone, functions: .standard).dependencies()))
        try store.read { snapshot throws in #expect(try none.dependents(of: [japan, places[0]], in: snapshot).isEmpty) }
    }
}

extension DependentExpansion {
    /// Indexed objects whose items show one of `changed`, read as a history batch reads those whose digests
    /// changed (for their digests, then again with their first inverses) and then expanded.
    func dependents(of changed: Set<ManagedObjectID>, in snapshot: StoreSnapshot) throws -> Set<ManagedObjectID> {
        try dependents(of: digests.withFirstInverses(digests.objects(changed, in: snapshot), in: snapshot), in: snapshot)
    }
}
