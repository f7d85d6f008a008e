@testable import CoreDataStore
import Foundation
import GRDB
import Testing

/// Fetch-request templates: read from `.xcdatamodel` files and from the archived model of a store's
/// `Z_MODELCACHE`, their predicates written back in `NSPredicate` format.
@Suite("Fetch-request templates")
struct FetchRequestTemplateTests {
    @Test("Apple-archived predicates (SampleModel2's fetched properties) are written back in NSPredicate format",
          .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
    func applePredicates() throws {
        let directory = Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Fixtures.copyStore("SampleModel2_V1", to: directory)
        let content = try DatabaseQueue(path: path).read { db in try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE") }
        let archive = try KeyedArchive(data: try RawDeflate.inflate(try #require(content)))
        var written: Set<String> = []
        for object in archive.objects where archive.className(of: object) == "NSFetchedPropertyDescription" {
            let request = archive.resolve(object["NSFetchRequest"])
            let predicate = try #require(archive.resolve(request?["NSPredicate"]))
            written.insert(try #require(ManagedObjectModel.predicateFormat(predicate, archive: archive)))
        // (Operator 99 is NSContainsPredicateOperatorType, archived by NSInPredicateOperator with its options as NSFlags.)
        }
        #expect(written == ["authorAlias == $FETCH_SOURCE.alias",
                            "(authorAlias == $FETCH_SOURCE.alias) AND (comment CONTAINS[c] $FETCHED_PROPERTY.userInfo.search)"])
        // Its model has no templates of its own.
        #expect(try PersistentStore(path: path).model.fetchRequestTemplates.isEmpty)
    }

    @Test("an archived model's NSFetchRequestTemplates: names, entities, predicates; what cannot be written back is left out")
    func archivedTemplates() throws {
        var builder = KeyedArchiveBuilder()
        func expression(_ fields: [String: PropertyListValue], _ className: String) -> PropertyListValue {
            builder.add(className: [className, "NSExpression", "NSObject"], fields: fields)
        }
        let entity = builder.add(className: ["NSEntityDescription", "NSObject"], fields: ["NSEntityName": builder.add(string: "Human")])
        func keyPath(_ path: String) -> PropertyListValue {
            let specifier = expression(["NSExpressionType": .integer(10), "NSKeyPath": builder.add(string: path)], "NSKeyPathSpecifierExpression")
            return expression(["NSExpressionType": .integer(3), "NSOperand": expression(["NSExpressionType": .integer(1)], "NSSelfExpression"),
                               "NSSelectorName": builder.add(string: "valueForKey:"), "NSArguments": builder.add(array: [specifier], className: "NSMutableArray")],
                              "NSKeyPathExpression")
        }
        func comparison(_ left: PropertyListValue, _ type: Int64, _ right: PropertyListValue, options: Int64 = 0, modifier: Int64 = 0) -> PropertyListValue {
            let operation = builder.add(className: ["NSComparisonPredicateOperator", "NSPredicateOperator", "NSObject"],
                                        fields: ["NSOperatorType": .integer(type), "NSOptions": .integer(options), "NSModifier": .integer(modifier)])
            return builder.add(className: ["NSComparisonPredicate", "NSPredicate", "NSObject"],
                               fields: ["NSLeftExpression": left, "NSRightExpression": right, "NSPredicateOperator": operation])
        }
        let variable = expression(["NSExpressionType": .integer(2), "NSVariable": builder.add(string: "humanName")], "NSVariableExpression")
        let minimum = expression(["NSExpressionType": .integer(0), "NSConstantValue": .integer(18)], "NSConstantValueExpression")
        let both = builder.add(className: ["NSCompoundPredicate", "NSPredicate", "NSObject"], fields: [
            "NSCompoundPredicateType": .integer(1),
            "NSSubpredicates": builder.add(array: [comparison(keyPath("humanName"), 8, variable, options: 3), comparison(keyPath("age"), 3, minimum)]),
        ])
        func request(_ predicate: PropertyListValue?) -> PropertyListValue {
            var fields: [String: PropertyListValue] = ["NSEntity": entity]
            if let predicate { fields["NSPredicate"] = predicate }
            return builder.add(className: ["NSFetchRequest", "NSPersistentStoreRequest", "NSObject"], fields: fields)
        }
        // A constant array that holds itself: left out, not followed forever.
        let loop = builder.reserve()
        builder.fill(loop, className: ["NSArray", "NSObject"], fields: ["NS.objects": .array([loop])])
        let looping = comparison(keyPath("age"), 10, expression(["NSExpressionType": .integer(0), "NSConstantValue": loop], "NSConstantValueExpression"))
        let templates = builder.add(dictionary: [
            ("adultsNamed", request(both)), ("everyone", request(nil)),
            ("allOlder", request(comparison(keyPath("age"), 2, minimum, modifier: 1))),  // ALL: left out
            ("loop", request(looping)),
            // ANY is the index's own reading of an attribute's several values: written as a plain comparison.
            ("anyOlder", request(comparison(keyPath("age"), 2, minimum, modifier: 2))),
            // A function other than a key path (uppercase:) is not a key path: left out.
            ("shouting", request(comparison(expression(["NSExpressionType": .integer(4), "NSSelectorName": builder.add(string: "uppercase:"),
                                                         "NSOperand": expression(["NSExpressionType": .integer(1)], "NSSelfExpression"),
                                                         "NSArguments": builder.add(array: [expression(["NSExpressionType": .integer(10), "NSKeyPath": builder.add(string: "humanName")], "NSKeyPathSpecifierExpression")], className: "NSMutableArray")],
                                                        "NSFunctionExpression"), 4, variable))),
        ])
        let root = builder.add(className: ["NSManagedObjectModel", "NSObject"], fields: ["NSFetchRequestTemplates": templates])
        let archive = try KeyedArchive(data: builder.encoded(root: root))
        let found = ManagedObjectModel.fetchRequestTemplates(in: archive, model: try #require(archive.root))
        #expect(found == [
            FetchRequestTemplate(name: "adultsNamed", entityName: "Human", predicate: "(humanName BEGINSWITH[cd] $humanName) AND (age >= 18)"),
            FetchRequestTemplate(name: "anyOlder", entityName: "Human", predicate: "age > 18"),
            FetchRequestTemplate(name: "everyone", entityName: "Human", predicate: nil),
        ])
    }

    @Test("an .xcdatamodel's top-level <fetchRequest> elements, not those of fetched properties",
          .enabled(if: FileManager.default.fileExists(atPath: Fixtures.models.path), "../shared/fixtures/models is absent"))
    func modelFile() throws {
        let model = try ManagedObjectModel(contentsOf: Fixtures.models.appendingPathComponent("SwiftGen__SwiftGen__Model/contents").path)
        #expect(model.fetchRequestTemplates.map(\.name) == ["DictionaryFetchRequest", "ObjectFetchRequest", "ObjectIDFetchRequest"])
        #expect(model.fetchRequestTemplates.last?.predicate == "oneToOne.name == $NAME OR string == $NEEDLE")
    }
}
