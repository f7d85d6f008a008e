import CoreDataStore
import Foundation
@testable import Indexer
import SeededRandom
import Testing

@Suite("Expressions and configuration")
struct ExpressionTests {
    @Test("the NSExpression subset parses", arguments: [
        ("name", "name"), ("country.name", "country.name"), ("'a \\'quoted\\' text'", "'a \\'quoted\\' text'"), ("42", "42"),
        ("lowercase:(name)", "lowercase:(name)"), ("count:(places)", "count:(places)"), ("now()", "now()"),
        ("FUNCTION(name, 'stringByAppendingString:', ' city')", "FUNCTION(name, 'stringByAppendingString:', ' city')"),
        ("  average:( places.population )  ", "average:(places.population)"),
    ])
    func parses(text: String, rendered: String) throws {
        #expect(try ExpressionParser.parse(text).description == rendered)
    }

    @Test("errors point at the offending character", arguments: [
        ("name.", 6), ("'open", 1), ("frobnicate:(x)", 1), ("count:(a, b)", 1), ("FUNCTION(name)", 1), ("name name", 6), ("", 1), ("(", 1),
    ])
    func errors(text: String, position: Int) {
        #expect(throws: ExpressionError.self) { try ExpressionParser.parse(text) }
        do { _ = try ExpressionParser.parse(text) } catch { #expect(error.position == position, "\(text): \(error)") }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Country", attributes: [
                AttributeDescription(name: "name", type: .string), AttributeDescription(name: "population", type: .integer64),
            ], relationships: [RelationshipDescription(name: "places", destinationEntityName: "Place", inverseName: "country", isToMany: true)]),
            EntityDescription(name: "Place", attributes: [
                AttributeDescription(name: "name", type: .string), AttributeDescription(name: "latitude", type: .double),
                AttributeDescription(name: "longitude", type: .double), AttributeDescription(name: "population", type: .integer64),
                AttributeDescription(name: "payload", type: .binaryData),
            ], relationships: [RelationshipDescription(name: "country", destinationEntityName: "Country", inverseName: "places")]),
        ])
    }

    @Test("componentsSeparatedByString: makes one list attribute several values; joined again it is the same text")
    func separatedValues() throws {
        let split = try #require(FunctionRegistry.standard.function("componentsSeparatedByString:"))
        let join = try #require(FunctionRegistry.standard.function("componentsJoinedByString:"))
        let values = split(.string("Roma, Rom, , Rzym"), [.string(", ")])
        #expect(values.texts == ["Roma", "Rom", "Rzym"])
        #expect(join(values, [.string(", ")]) == .string("Roma, Rom, Rzym"))
        #expect(split(.list([.string("a|b"), .string("c")]), [.string("|")]).texts == ["a", "b", "c"])
        #expect(split(.string("whole"), []).texts == ["whole"] && split(.null, [.string(",")]).texts.isEmpty)
    }

    /// Pieces that test every rule the byte search stands in for: `\r\n`, combining and spacing marks, a
    /// zero-width joiner, a prepended mark (U+0600), flags, Hangul syllables in jamo, emoji with modifiers,
    /// a virama conjunct, and the three scalars canonically equal to an ASCII character.
    static let splitPalette: [String] = [
        "a", "b", "K", ";", "`", ",", " ", ", ", "\r", "\n", "\r\n", "|", "aa", "\u{301}", "\u{903}", "\u{200D}", "\u{600}",
        "\u{1F1EB}", "\u{1F1F7}", "\u{1100}", "\u{1161}", "\u{11A8}", "\u{1F44D}", "\u{1F3FD}", "\u{FE0F}", "\u{20E3}",
        "\u{915}", "\u{94D}", "\u{937}", "é", "e", "\u{37E}", "\u{1FEF}", "\u{212A}", "Москва", "東京", "\u{0}",
    ]

    @Test("componentsSeparatedByString: splits exactly as Foundation does, on 20,000 random texts and separators")
    func splitMatchesFoundation() {
        var generator = SeededGenerator(seed: 14)
        let separators = [",", ", ", ";", "K", "`", "\r", "\n", "\r\n", "a", "aa", "|", " ", ",\r", "e"]
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in Self.splitPalette.randomElement(using: &generator) ?? "" }.joined()
            let separator = separators.randomElement(using: &generator) ?? ","
            let expected = text.components(separatedBy: separator), found = text.componentsSplit(by: separator)
            // Compared scalar by scalar: String's == would call canonically equal pieces equal.
            if found.map({ Array($0.unicodeScalars) }) != expected.map({ Array($0.unicodeScalars) }) {
                mismatches.append("\(text.unicodeScalars.map { String($0.value, radix: 16) }) by \(separator.debugDescription)")
            }
        }
        let count = mismatches.count
        #expect(count == 0, "texts split otherwise, e.g. \(mismatches.prefix(5))")
        // A non-ASCII separator is Foundation's own search.
        #expect("Roma · Rom".componentsSplit(by: " · ") == ["Roma", "Rom"])
    }

    @Test("zero configuration follows DESIGN §4")
    func defaults() throws {
        let resolved = try ResolvedConfiguration(nil, model: try Self.model())
        let place = try #require(resolved.plans["Place"])
        #expect(place.displayName == .keyPath(["name"]))
        #expect(place.latitude == .keyPath(["latitude"]) && place.longitude == .keyPath(["longitude"]))
        #expect(resolved.plans["Country"]?.displayName == .keyPath(["name"]))
    }

    @Test("configuration errors name the entity, property and position")
    func configurationErrors() throws {
        let model = try Self.model()
        func resolve(_ json: String) throws -> ResolvedConfiguration {
            try ResolvedConfiguration(try IndexConfiguration(json: Data(json.utf8)), model: model)
        }
        do { _ = try resolve(#"{"entities": {"Planet": {}}}"#); Issue.record("unknown entity accepted") }
        catch { #expect("\(error)".contains("'Planet'")) }
        do { _ = try resolve(#"{"entities": {"Place": {"text": ["country.nmae"]}}}"#); Issue.record("unknown property accepted") }
        catch { #expect("\(error)".contains("character 9") && "\(error)".contains("Country has no property 'nmae'")) }
        do { _ = try resolve(#"{"entities": {"Place": {"title": "name.length"}}}"#); Issue.record("attribute hop accepted") }
        catch { #expect("\(error)".contains("only relationships can be followed")) }
        do { _ = try resolve(#"{"entities": {"Place": {"colour": "name"}}}"#); Issue.record("unknown field accepted") }
        catch { #expect("\(error)".contains("colour")) }
        let excluded = try resolve(#"{"entities": {"Country": false, "Place": {"rank": "population"}}}"#)
        #expect(excluded.plans["Country"] == nil && excluded.plans["Place"]?.rank == .keyPath(["population"]))
        #expect(excluded.digest != (try resolve(#"{"entities": {}}"#)).digest)
    }
}

import Foundation
