import CoreDataStore
import CoreDataStoreWriter
import GRDB
import SearchIndex
import Foundation
@testable import Indexer
import Testing

/// Configurations nobody checked: nesting, length and non-regular files are refused with a position.
@Suite("Hostile configurations")
struct HostileConfigurationTests {
    func resolve(_ displayName: String) throws(ResolvedConfiguration.ResolutionError) -> ResolvedConfiguration {
        try ResolvedConfiguration(IndexConfiguration(entities: ["Place": .fields(.init(displayName: displayName))]), model: try! ExpressionTests.model())
    }

    @Test("nesting 100,000 deep, 500 deep, a 100,000-part key path: refused with the position, never a stack overflow",
          arguments: [String(repeating: "lowercase:(", count: 100_000) + "name" + String(repeating: ")", count: 100_000),
                      String(repeating: "lowercase:(", count: 500) + "name" + String(repeating: ")", count: 500),
                      String(repeating: "FUNCTION(", count: 200) + "name" + String(repeating: ", 'stringByAppendingString:', 'x')", count: 200),
                      Array(repeating: "country", count: 100_000).joined(separator: "."),
                      Array(repeating: "country", count: 40).joined(separator: ".") + ".name"])
    func nesting(expression: String) {
        do {
            _ = try resolve(expression)
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("at character"), "\(error.description.prefix(200))")
        }
    }

    @Test("an expression nested as deep as allowed still works")
    func allowedDepth() throws {
        let expression = String(repeating: "lowercase:(", count: ExpressionParser.maximumDepth) + "name" + String(repeating: ")", count: ExpressionParser.maximumDepth)
        _ = try resolve(expression)
    }

    @Test("a FIFO or a directory as the configuration file is refused at once", .timeLimit(.minutes(1)))
    func fifo() throws {
        let folder = try TestFolder.make("config")
        let fifo = folder.appendingPathComponent("config.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: IndexConfiguration.LoadError.self) { try IndexConfiguration(contentsOf: fifo) }
        #expect(throws: IndexConfiguration.LoadError.self) { try IndexConfiguration(contentsOf: folder.path) }
        let deep = folder.appendingPathComponent("deep.json").path
        try Data(("{\"entities\": " + String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000) + "}").utf8)
            .write(to: URL(fileURLWithPath: deep))
        #expect(throws: IndexConfiguration.LoadError.self) { try IndexConfiguration(contentsOf: deep) }
    }
}

/// One bad value never stops the exporter.
@Suite("Non-finite values")
struct NonFiniteValueTests {
    @Test("infinite ranks and coordinates are left out and counted; the items are indexed; the next run works")
    func infinities() async throws {
        let (folder, path, writer) = try TestFolder.atlasStore("nan")
        var save = SaveRequest()
        for name in ["Infinity", "Plain"] {
            save.insert("Place", attributes: ["name": .string(name), "latitude": .double(10), "longitude": .double(20), "population": .integer(5)])
        }
        _ = try writer.save(save)
        // What a store can hold that no number should be: SQLite keeps infinities in REAL columns.
        let raw = try GRDB.DatabaseQueue(path: path)
        try await raw.write { db in try db.execute(sql: "UPDATE ZPLACE SET ZPOPULATION = 1e308 * 10, ZLATITUDE = -1e308 * 10 WHERE ZNAME = 'Infinity'") }
        try raw.close()

        let configuration = try IndexConfiguration(json: Data(#"{"entities": {"Place": {"rank": "population"}, "Country": false}}"#.utf8))
        let indexPath = folder.appendingPathComponent("atlas.searchindex").path
        for run in 0..<2 {
            let store = try PersistentStore(path: path)
            let index = try SearchIndex(path: indexPath, mode: .readWrite(permissions: nil))
            let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(configuration, model: store.model))
            let summary = try await exporter.catchUp(rebuild: run == 1)
            // A rebuild writes the items again over the old ones: nothing new to insert the second time.
            #expect(summary.inserted == (run == 0 ? 2 : 0))
            #expect(summary.omittedValues == 2) // the rank and the latitude
            let items = try await index.dump()
            let infinity = try #require(items.first { $0.displayName == "Infinity" })
            #expect(infinity.rank == 0 && infinity.latitude == nil && infinity.longitude == nil)
            #expect(items.first { $0.displayName == "Plain" }?.rank == 5)
            exporter.close()
        }
    }
}

/// Fields that must be numbers or dates are checked against the model.
@Suite("Configuration types")
struct ConfigurationTypeTests {
    func resolve(_ json: String) throws -> ResolvedConfiguration {
        try ResolvedConfiguration(try IndexConfiguration(json: Data(json.utf8)), model: try ExpressionTests.model())
    }

    @Test("an ItemProducer's item is held to what any item may hold: its non-finite values and no-place are left out and counted, its text capped")
    func hostileProducer() async throws {
        let (folder, path, writer) = try TestFolder.atlasStore("hostile-producer")
        var save = SaveRequest()
        save.insert("Place", attributes: ["name": .string("Everywhere"), "population": .integer(5)])
        _ = try writer.save(save)
        let producer = ClosureItemProducer { _, proposed in
            var item = proposed
            item.text = (0..<5_000).map { "word\($0)" }
            item.rank = .infinity
            (item.latitude, item.longitude) = (200, 10)
            item.attributes["population"] = [.number(.nan), .number(5)]
            item.attributes["founded"] = [.date(Date(timeIntervalSinceReferenceDate: .infinity))]
            return item
        }
        let json = #"{"entities": {"Place": {"displayName": "name", "text": ["name"], "attributes": {"population": "population"}}, "Country": false}}"#
        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: folder.appendingPathComponent("atlas.searchindex").path, mode: .readWrite(permissions: nil))
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(try IndexConfiguration(json: Data(json.utf8)), model: store.model),
                                    producers: ["Place": producer])
        let summary = try await exporter.catchUp()
        exporter.close()
        // The rank, the place (one count for both halves), a population and the founding date.
        #expect(summary.inserted == 1 && summary.omittedValues == 4, "\(summary)")
        let item = try #require(try await index.dump().first)
        #expect(item.text.count == ItemBuilder.maximumValues && item.rank == 0 && item.latitude == nil && item.longitude == nil)
        // The finite population is still a filter value.
        var filtered = SearchRequest()
        filtered.filter = "population == 5"
        #expect(try await index.count(filtered) == 1)
    }

    @Test("a String as latitude, longitude or rank, a number as date, a string literal: refused with the position")
    func wrongTypes() throws {
        for json in [#"{"entities": {"Place": {"latitude": "name"}}}"#, #"{"entities": {"Place": {"longitude": "country.name"}}}"#,
                     #"{"entities": {"Place": {"rank": "'big'"}}}"#, #"{"entities": {"Place": {"date": "population"}}}"#] {
            do {
                _ = try resolve(json)
                Issue.record("accepted \(json)")
            } catch {
                #expect("\(error)".contains("not a number") || "\(error)".contains("not a date") || "\(error)".contains("is a string"), "\(error)")
            }
        }
        _ = try resolve(#"{"entities": {"Place": {"rank": "count:(country.places)", "latitude": "latitude"}}}"#)
    }

    @Test("zero configuration finds prefixed coordinate pairs and knows the model's 'unset' defaults")
    func coordinates() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Moment", attributes: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "approximateLatitude", type: .double, defaultValue: "-180"),
                AttributeDescription(name: "approximateLongitude", type: .double, defaultValue: "-180"),
            ]),
        ])
        let plan = try #require(try ResolvedConfiguration(nil, model: model).plans["Moment"])
        #expect(plan.latitude == .keyPath(["approximateLatitude"]) && plan.longitude == .keyPath(["approximateLongitude"]))
        #expect(plan.unsetPlace == .init(latitude: -180, longitude: -180))
    }
}
