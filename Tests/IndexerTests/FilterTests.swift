import CoreDataStore
import CoreDataStoreWriter
import Foundation
@testable import Indexer
@testable import SearchIndex
import SeededRandom
import Testing

/// `--where` filters: every random NSPredicate's answer over a store the project's writer made equals an
/// independent evaluation of the predicate over the objects, written here in Swift without SQL.
@Suite("Attribute filters")
struct FilterTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Country", attributes: [AttributeDescription(name: "code", type: .string)],
                              relationships: [RelationshipDescription(name: "cities", destinationEntityName: "City", inverseName: "country", isToMany: true)]),
            EntityDescription(name: "City", attributes: [
                AttributeDescription(name: "name", type: .string), AttributeDescription(name: "population", type: .integer64, isOptional: true),
                AttributeDescription(name: "founded", type: .date, isOptional: true), AttributeDescription(name: "capital", type: .boolean),
            ], relationships: [RelationshipDescription(name: "country", destinationEntityName: "Country", inverseName: "cities")]),
        ])
    }

    /// A city as the evaluator sees it.
    struct City {
        var uri = "", name = "", code: String?
        var population: Double?, founded: Date?, capital = 0.0
    }

    static let names = ["San José", "Santa Rosa", "São Paulo", "Zürich", "zurich", "Köln", "Osaka", "Ōsaka", "Roma", "rome", "Nice", "Niš"]
    static let codes = ["JP", "FR", "CH", "IT", "BR", "RS"]

    /// `searches`, when given, is the configuration's `"searches"` object.
    static func build(searches: String? = nil) async throws -> (index: SearchIndex, cities: [City]) {
        let folder = try TestFolder.make("filters")
        let storePath = folder.appendingPathComponent("Cities.sqlite").path
        let store = try StoreWriter.create(at: storePath, model: try Self.model())
        var generator = SeededGenerator(seed: 404)
        var save = SaveRequest()
        let countries = codes.map { save.insert("Country", attributes: ["code": .string($0)]) }
        for _ in 0..<400 {
            var attributes: [String: AttributeValue] = ["name": .string(names.randomElement(using: &generator) ?? "Roma"),
                                                        "capital": .boolean(Bool.random(using: &generator))]
            if Int.random(in: 0..<5, using: &generator) > 0 { attributes["population"] = .integer(Int64.random(in: 0...5_000_000, using: &generator)) }
            if Int.random(in: 0..<5, using: &generator) > 0 {
                attributes["founded"] = .date(Date(timeIntervalSince1970: Double(Int.random(in: -3_000_000_000...1_700_000_000, using: &generator))))
            }
            let country = Int.random(in: 0...codes.count, using: &generator)
            save.insert("City", attributes: attributes, relationships: country < codes.count ? ["country": .toOne(countries[country])] : [:])
        }
        _ = try store.save(save)
        let persistent = try PersistentStore(path: storePath)
        let index = try SearchIndex(path: folder.appendingPathComponent("Cities.searchindex").path, mode: .readWrite(permissions: nil))
        let configuration = try IndexConfiguration(json: Data(#"""
            {"entities": {"Country": false, "City": {"displayName": "name", "attributes":
              {"name": "name", "population": "population", "founded": "founded", "capital": "capital", "country": "country.code"}}}\#(searches.map { ", \"searches\": " + $0 } ?? "")}
            """#.utf8))
        _ = try await Exporter(store: persistent, index: index, configuration: try ResolvedConfiguration(configuration, model: persistent.model)).catchUp()
        // The evaluator's view, read through the store reader (no index, no SQL of ours).
        var cities: [City] = []
        try persistent.read { snapshot throws in
            let countries = Dictionary(uniqueKeysWithValues: try snapshot.objects(ofEntity: "Country", afterPrimaryKey: 0, limit: 100, relationships: .toOneOnly)
                .map { ($0.objectID, $0.attributes["code"]) })
            for object in try snapshot.objects(ofEntity: "City", afterPrimaryKey: 0, limit: 1_000, relationships: .toOneOnly) {
                var city = City(uri: object.objectID.uriRepresentation)
                if case .string(let name)? = object.attributes["name"] { city.name = name }
                if case .integer(let population)? = object.attributes["population"] { city.population = Double(population) }
                if case .date(let date)? = object.attributes["founded"] { city.founded = date }
                if case .boolean(let flag)? = object.attributes["capital"] { city.capital = flag ? 1 : 0 }
                if let country = object.toOne["country"], case .string(let code)?? = countries[country] { city.code = code }
                cities.append(city)
            }
        }
        return (index, cities)
    }

    /// NSPredicate semantics for one city, by hand.
    static func evaluate(_ predicate: FilterPredicate, _ city: City) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .not(let inner): return !evaluate(inner, city)
        case .and(let parts): return parts.allSatisfy { evaluate($0, city) }
        case .or(let parts): return parts.contains { evaluate($0, city) }
        case .comparison(let attribute, let comparison, let options, let values):
            if comparison == .notEqual { return !evaluate(.comparison(attribute: attribute, operator: .equal, options: options, values: values), city) }
            let value: FilterValue? = switch attribute {
            case "name": .string(city.name)
            case "country": city.code.map(FilterValue.string)
            case "population": city.population.map(FilterValue.number)
            case "founded": city.founded.map(FilterValue.date)
            default: .number(city.capital)
            }
            if values == [.null] { return value == nil }
            guard let value else { return false }
            func fold(_ text: String) -> String {
                var folding: String.CompareOptions = []
                if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
                if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
                return text.folding(options: folding, locale: nil)
            }
            func compare(_ literal: FilterPredicate.Literal, _ test: (ComparisonResult) -> Bool) -> Bool {
                switch (value, literal) {
                case (.number(let a), .number(let b)): return test(a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame)
                case (.date(let a), .date(let b)): return test(a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame)
                case (.date(let a), .string(let text)):
                    guard let b = PredicateParser.date(text) else { return false }
                    return test(a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame)
                case (.string(let a), .string(let b)):
                    let (x, y) = (Array(fold(a).unicodeScalars.map(\.value)), Array(fold(b).unicodeScalars.map(\.value)))
                    return test(x.lexicographicallyPrecedes(y) ? .orderedAscending : x == y ? .orderedSame : .orderedDescending)
                default: return false
                }
            }
            switch comparison {
            case .equal: return compare(values[0]) { $0 == .orderedSame }
            case .less: return compare(values[0]) { $0 == .orderedAscending }
            case .lessOrEqual: return compare(values[0]) { $0 != .orderedDescending }
            case .greater: return compare(values[0]) { $0 == .orderedDescending }
            case .greaterOrEqual: return compare(values[0]) { $0 != .orderedAscending }
            case .between: return compare(values[0]) { $0 != .orderedAscending } && compare(values[1]) { $0 != .orderedDescending }
            case .in: return values.contains { literal in compare(literal) { $0 == .orderedSame } }
            case .beginsWith, .endsWith, .contains, .like, .matches:
                guard case .string(let text) = value, case .string(let pattern) = values[0] else { return false }
                let (a, b) = (Array(fold(text).unicodeScalars), Array(fold(pattern).unicodeScalars))
                switch comparison {
                case .beginsWith: return a.starts(with: b)
                case .endsWith: return a.reversed().starts(with: b.reversed())
                case .contains: return b.isEmpty || (0...max(0, a.count - b.count)).contains { a.count >= b.count && Array(a[$0..<$0 + b.count]) == b }
                case .like: return wildcard(a[...], b[...])
                default: return (try? Regex(String(String.UnicodeScalarView(b))).wholeMatch(in: String(String.UnicodeScalarView(a)))) != nil
                }
            default: return false
            }
        }
    }

    /// LIKE by recursion: `*` any run, `?` one scalar.
    static func wildcard(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        if first == "*" { return (0...text.count).contains { wildcard(text.dropFirst($0), pattern.dropFirst()) } }
        guard let head = text.first, first == "?" || first == head else { return false }
        return wildcard(text.dropFirst(), pattern.dropFirst())
    }

    static func randomPredicate(_ generator: inout SeededGenerator, depth: Int = 0) -> String {
        if depth < 2, Int.random(in: 0..<3, using: &generator) == 0 {
            let joiner = ["AND", "OR", "&&", "||"].randomElement(using: &generator) ?? "AND"
            let left = randomPredicate(&generator, depth: depth + 1), right = randomPredicate(&generator, depth: depth + 1)
            return (Bool.random(using: &generator) ? "NOT " : "") + "(\(left) \(joiner) \(right))"
        }
        let options = ["", "[c]", "[d]", "[cd]"].randomElement(using: &generator) ?? ""
        func name() -> String { "\"\((names + ["San", "Z", "os"]).randomElement(using: &generator) ?? "Roma")\"" }
        switch Int.random(in: 0..<9, using: &generator) {
        case 0: return "population \(["<", ">", "<=", ">=", "==", "!="].randomElement(using: &generator) ?? "<") \(Int.random(in: 0...5_000_000, using: &generator))"
        case 1: return "population BETWEEN {\(Int.random(in: 0...2_000_000, using: &generator)), \(Int.random(in: 2_000_000...5_000_000, using: &generator))}"
        case 2: return "country \(["==", "!="].randomElement(using: &generator) ?? "==") \(Bool.random(using: &generator) ? "nil" : "\"\(codes.randomElement(using: &generator) ?? "JP")\"")"
        case 3: return "country IN {\"\(codes.randomElement(using: &generator) ?? "JP")\", '\(codes.randomElement(using: &generator) ?? "FR")'}"
        case 4: return "name \(["==", "!=", "<", ">="].randomElement(using: &generator) ?? "==")\(options) \(name())"
        case 5: return "name \(["BEGINSWITH", "ENDSWITH", "CONTAINS"].randomElement(using: &generator) ?? "CONTAINS")\(options) \(name())"
        case 6: return "name LIKE\(options) \"\(["*a", "S?n*", "*ö*", "z*", "R?m?"].randomElement(using: &generator) ?? "*")\""
        case 7:
            let year = Int.random(in: 1900...2030, using: &generator)
            return Bool.random(using: &generator) ? "founded \([">", "<"].randomElement(using: &generator) ?? ">") CAST('\(year)-01-01T00:00:00Z', 'NSDate')"
                : "founded >= '\(year)-06-01'"
        default: return "capital == \(["YES", "NO", "TRUE", "1"].randomElement(using: &generator) ?? "YES")"
        }
    }

    @Test("1,000 random predicates: the index's answer is the independent evaluation's, on every plan without words")
    func randomPredicates() async throws {
        let (index, cities) = try await Self.build()
        #expect(cities.count == 400)
        var generator = SeededGenerator(seed: 77)
        var nonEmpty = 0
        for _ in 0..<1_000 {
            let text = Self.randomPredicate(&generator)
            let predicate = try PredicateParser.parse(text)
            let expected = Set(cities.filter { Self.evaluate(predicate, $0) }.map(\.uri))
            var request = SearchRequest(limit: 1_000)
            request.filter = text
            let found = try await index.search(request).hits.map(\.uri)
            #expect(Set(found) == expected && found.count == expected.count, "\(text): \(found.count) found, \(expected.count) expected")
            if !expected.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 300)
    }

    @Test("300 random filters sorted by an attribute and faceted: order and counts as brute force computes them")
    func sortAndFacets() async throws {
        let (index, cities) = try await Self.build()
        var generator = SeededGenerator(seed: 78)
        for round in 0..<300 {
            let text = Self.randomPredicate(&generator)
            let predicate = try PredicateParser.parse(text)
            let matching = cities.filter { Self.evaluate(predicate, $0) }
            let descending = Bool.random(using: &generator)
            let offset = Int.random(in: 0...5, using: &generator), limit = Int.random(in: 1...50, using: &generator)
            var request = SearchRequest(limit: limit, offset: offset)
            request.filter = text
            request.sortAttribute = AttributeOrder(name: "population", descending: descending)
            request.facets = ["country", "capital"]
            let results = try await index.search(request)
            // The page's populations are the brute-force order's (cities without one last); ties may come in any order.
            let order = matching.map(\.population).sorted { a, b in
                switch (a, b) {
                case (nil, _): false
                case (_, nil): true
                case (let x?, let y?): descending ? x > y : x < y
                }
            }
            let byURI = Dictionary(uniqueKeysWithValues: cities.map { ($0.uri, $0) })
            let page = results.hits.map { byURI[$0.uri]?.population }
            #expect(page == Array(order.dropFirst(offset).prefix(limit)), "round \(round): \(text)")
            // Facets count every match, not the page; a single-valued attribute's counts sum to the matches carrying it.
            var countries: [String: Int] = [:]
            for city in matching { if let code = city.code { countries[code, default: 0] += 1 } }
            let facet = try #require(results.facets.first { $0.name == "country" })
            #expect(Dictionary(uniqueKeysWithValues: facet.values.map { ($0.value, $0.count) }) == countries, "round \(round): \(text)")
            let capital = try #require(results.facets.first { $0.name == "capital" })
            #expect(capital.values.reduce(0) { $0 + $1.count } == matching.count, "round \(round): \(text)")
        }
    }

    @Test("facets of word searches (one statement) count what brute force counts, with and without a filter")
    func wordFacets() async throws {
        let (index, cities) = try await Self.build()
        for word in ["san", "roma", "zurich", "osaka", "nice", "paulo"] {
            for filter in [nil, "population > 2000000"] {
                var request = SearchRequest(query: word, limit: 5)
                request.filter = filter
                request.facets = ["country"]
                let matching = cities.filter { city in
                    SearchTokenizer.tokens(in: city.name).map(\.text).contains(word) && (filter == nil || (city.population ?? 0) > 2_000_000)
                }
                var expected: [String: Int] = [:]
                for city in matching { if let code = city.code { expected[code, default: 0] += 1 } }
                let facet = try #require(try await index.search(request).facets.first)
                #expect(Dictionary(uniqueKeysWithValues: facet.values.map { ($0.value, $0.count) }) == expected, "\(word) \(filter ?? "")")
                #expect(try await index.count(request) == matching.count)
            }
        }
    }

    @Test("filters combine with words; a filter-only search lists the most important first; unknown attributes and bad syntax are errors with positions")
    func combined() async throws {
        let (index, cities) = try await Self.build()
        var request = SearchRequest(query: "roma", limit: 1_000)
        request.filter = "population > 1000000"
        let expected = Set(cities.filter { $0.name == "Roma" && ($0.population ?? 0) > 1_000_000 }.map(\.uri))
        #expect(Set(try await index.search(request).hits.map(\.uri)) == expected && !expected.isEmpty)
        #expect(try await index.count(request) == expected.count)
        var errors: [String: Int] = [:]
        for (text, position) in [("populaton > 5", 1), ("population >", 13), ("population > 5 AND", 19), ("name == 'open", 9),
                                 ("name CONTAINS 5", 6), ("(population > 5", 16), ("name MATCHES '('", 6), ("population ~ 5", 12)] {
            request.filter = text
            do {
                _ = try await index.search(request)
                Issue.record("\(text) was accepted")
            } catch .invalidPredicate(let reason, let at) {
                errors[text] = at
                #expect(at == position, "\(text): at \(at), expected \(position)")
                // A pattern that does not compile says why, in the regular expression parser's words.
                if text.contains("MATCHES") { #expect(reason.contains("is not one (expected ')'). Escape a special character"), "\(reason)") }
            } catch {
                Issue.record("\(text): \(error)")
            }
        }
        #expect(errors.count == 8)
    }
}
