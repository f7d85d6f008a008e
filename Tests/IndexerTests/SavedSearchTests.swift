import CoreDataStore
import Foundation
@testable import Indexer
@testable import SearchIndex
import Testing
import TestScratch

/// Saved searches with `$VARIABLES`: the configuration's, and the model's fetch-request templates.
@Suite("Saved searches")
struct SavedSearchTests {
    @Test("variables: found in the query and the predicate, typed as values (never as syntax), each needed and none unknown")
    func variables() throws {
        let search = try SavedSearch(name: "big", query: "$NAME tower", filter: "population > $MIN AND name BEGINSWITH[cd] $PREFIX")
        #expect(search.variables == ["MIN", "NAME", "PREFIX"])
        let request = try search.request(variables: ["MIN": "1e6", "NAME": "san*", "PREFIX": "1 OR TRUEPREDICATE"])
        #expect(request.query == "san* tower")
        // The value is a string, not predicate syntax: it cannot widen the filter.
        #expect(try PredicateParser.parse(request.filter ?? "", variables: request.filterVariables)
                == .and([.comparison(attribute: "population", operator: .greater, options: [], values: [.number(1_000_000)]),
                         .comparison(attribute: "name", operator: .beginsWith, options: [.caseInsensitive, .diacriticInsensitive],
                                     values: [.string("1 OR TRUEPREDICATE")])]))
        // A number in quotes stays text.
        let code = try SavedSearch(name: "code", filter: "code == $CODE").request(variables: ["CODE": "\"007\""])
        #expect(try PredicateParser.parse(code.filter ?? "", variables: code.filterVariables) == .comparison(attribute: "code", operator: .equal, options: [], values: [.string("007")]))
        // A value reads as a number only when written as one in decimal: a postcode keeps its leading zero.
        for (value, literal) in [("01234", FilterPredicate.Literal.string("01234")), ("0x10", .string("0x10")), ("42", .number(42)),
                                 ("-3.5", .number(-3.5)), ("0.25", .number(0.25)), ("1e6", .number(1e6)), ("nan", .string("nan")), ("0", .number(0))] {
            let zip = try SavedSearch(name: "zip", filter: "zip == $ZIP").request(variables: ["ZIP": value])
            #expect(try PredicateParser.parse(zip.filter ?? "", variables: zip.filterVariables) == .comparison(attribute: "zip", operator: .equal, options: [], values: [literal]), "\(value)")
        }
        // A variable stands for a value, never for an attribute.
        #expect(throws: SearchIndexError.self) { try SavedSearch(name: "field", filter: "$FIELD == \"JP\"") }
        #expect(throws: SearchIndexError.invalidRequest(.missingVariable(search: "big", name: "PREFIX", variables: ["MIN", "NAME", "PREFIX"]))) {
            try search.request(variables: ["MIN": "1", "NAME": "x"])
        }
        #expect(throws: SearchIndexError.invalidRequest(.unknownVariable(search: "big", name: "MAX", variables: ["MIN", "NAME", "PREFIX"]))) {
            try search.request(variables: ["MIN": "1", "NAME": "x", "PREFIX": "a", "MAX": "2"])
        }
        // Templates are checked when declared, with the position of the fault.
        #expect(throws: SearchIndexError.invalidPredicate(reason: "expected a value, found the end", position: 13)) {
            try SavedSearch(name: "bad", filter: "population >")
        }
        #expect(throws: SearchIndexError.self) { try SavedSearch(name: "empty") }
        #expect(throws: SearchIndexError.self) { try SavedSearch(name: "order", filter: "x > 1", sort: "x:sideways") }
        // A value that makes the template wrong says whose predicate it is.
        #expect(throws: SearchIndexError.invalidQuery(reason: "the saved search 'pattern': its predicate, at character 6: MATCHES needs a regular expression; '(' is not one (expected ')'). Escape a special character with \\ to match it as itself, or compare plain text with CONTAINS or LIKE")) {
            try SavedSearch(name: "pattern", filter: "name MATCHES $P").request(variables: ["P": "("])
        }
        // A query template is checked when declared too.
        #expect(throws: SearchIndexError.self) { try SavedSearch(name: "q", query: "$A OR") }
        // The caller's own words, filter, entities and order refine it; entities only narrow.
        let cities = try SavedSearch(name: "cities", query: "$NAME", filter: "population > $MIN", entities: ["City", "Town"], sort: "population:desc")
        var own = SearchRequest(query: "bay", entities: ["Town"], limit: 5)
        own.filter = "country == \"JP\""
        let refined = try cities.request(variables: ["NAME": "san*", "MIN": "1"], refinedBy: own)
        #expect(refined.query == "san* bay" && refined.filter == "(population > $MIN) AND (country == \"JP\")" && refined.entities == ["Town"]
                && refined.sortAttribute == AttributeOrder(name: "population", descending: true) && refined.limit == 5)
        own.entities = ["Country"]
        #expect(throws: SearchIndexError.invalidRequest(.entityOutsideSavedSearch(search: "cities", entity: "Country", entities: ["City", "Town"]))) {
            try cities.request(variables: ["NAME": "x", "MIN": "1"], refinedBy: own)
        }
        own.entities = []
        own.filter = "population > $MIN"
        #expect(throws: SearchIndexError.self) { try cities.request(variables: ["NAME": "x", "MIN": "1"], refinedBy: own) }
        // Outside a saved search a variable is an error, not a string.
        #expect(throws: SearchIndexError.self) { try PredicateParser.parse("population > $MIN") }
    }

    @Test("the configuration's searches: read, printed and read back the same; bad ones refused with their path")
    func configuration() throws {
        let json = #"""
            {"entities": {}, "searches": {"bigCities": {"query": "$NAME", "where": "population > $MIN", "entity": "Place", "sort": "population:desc"},
              "two": {"where": "TRUEPREDICATE", "entity": ["A", "B"]}}}
            """#
        let configuration = try IndexConfiguration(json: Data(json.utf8))
        #expect(configuration.searches["bigCities"]?.variables == ["MIN", "NAME"] && configuration.searches["two"]?.entities == ["A", "B"])
        #expect(try IndexConfiguration(json: Data(configuration.json.utf8)) == configuration)
        for (bad, message) in [
            (#"{"searches": {"a b": {"where": "x > 1"}}}"#, "configuration: searches: 'a b' is not a name a search can be run by (letters, digits, _ and -)"),
            (#"{"searches": {"a": {"where": "x >"}}}"#, "configuration: searches.a.where, character 4: expected a value, found the end"),
            (#"{"entities": 3}"#, #"configuration: entities must be an object: {"Place": {"displayName": "name"}, "Log": false}"#),
            (#"{"searches": {"a": {"limit": 3}}}"#, "configuration: searches.a.limit is not understood; a saved search has entity, from, query, sort, where"),
            (#"{"searches": {"a": {}}}"#, "configuration: searches.a: invalid query: the saved search 'a' has neither a query nor a predicate (\"where\")"),
        ] {
            #expect(throws: IndexConfiguration.LoadError(description: message)) { try IndexConfiguration(json: Data(bad.utf8)) }
        }
    }

    @Test("a stored configuration the index cannot read back is reported as damage, not as no saved searches")
    func unreadableStoredConfiguration() throws {
        let path = Scratch.folder.appendingPathComponent("saved-damaged-\(UUID().uuidString).searchindex").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        var checkpoint = StoreCheckpoint(storeUUID: "S", storePath: "/s", token: 1)
        checkpoint.configuration = "not JSON"
        _ = try index.apply(IndexBatch(upserts: [], checkpoint: checkpoint))
        #expect(throws: SearchIndexError.self) { try index.savedSearches() }
        do { _ = try index.savedSearch(named: "x") } catch { #expect("\(error)".contains("damaged")) }
    }

    @Test("a saved search finds exactly what its predicate, evaluated by hand over the store's objects, keeps")
    func againstBruteForce() async throws {
        let (index, cities) = try await FilterTests.build(searches: #"""
            {"bigIn": {"where": "population >= $MIN AND country == $CODE", "entity": "City", "sort": "population:desc"},
             "named": {"query": "$WORD", "where": "name BEGINSWITH[cd] $PREFIX"}}
            """#)
        #expect(try index.savedSearches().keys.sorted() == ["bigIn", "named"])
        for (minimum, code) in [("1000000", "JP"), ("0", "FR"), ("4500000", "CH"), ("2500000.5", "BR")] {
            var request = try index.savedSearch(named: "bigIn").request(variables: ["MIN": minimum, "CODE": code])
            request.limit = 1_000
            let found = try await index.search(request).hits
            let predicate = try PredicateParser.parse("population >= \(minimum) AND country == \"\(code)\"")
            let expected = cities.filter { FilterTests.evaluate(predicate, $0) }
            #expect(Set(found.map(\.uri)) == Set(expected.map(\.uri)), "\(minimum) \(code)")
            let populations = found.compactMap { hit in cities.first { $0.uri == hit.uri }?.population }
            #expect(populations == populations.sorted(by: >))
        }
        var named = try index.savedSearch(named: "named").request(variables: ["WORD": "zurich", "PREFIX": "Z"])
        named.limit = 1_000
        let expected = cities.filter { $0.name.lowercased().folding(options: .diacriticInsensitive, locale: nil) == "zurich" }
        #expect(Set(try await index.search(named).hits.map(\.uri)) == Set(expected.map(\.uri)) && !expected.isEmpty)
        #expect(throws: SearchIndexError.self) { try index.savedSearch(named: "nope") }
        // An index whose configuration declares none says how to declare one.
        let (bare, _) = try await FilterTests.build()
        #expect(throws: SearchIndexError.invalidRequest(.unknownSavedSearch(name: "big", known: []))) {
            try bare.savedSearch(named: "big")
        }
    }

    @Test("fetch-request templates of a model file: read, and offered when their key paths are item attributes",
          .enabled(if: FileManager.default.fileExists(atPath: SavedSearchTests.swiftGenModel.path), "../shared/fixtures/models is absent"))
    func modelTemplates() throws {
        let model = try ManagedObjectModel(contentsOf: Self.swiftGenModel.path)
        #expect(model.fetchRequestTemplates.map(\.name).sorted() == ["allHumans", "byHumanName", "byParent", "byParentName", "oneByHumanName"])
        #expect(model.fetchRequestTemplates.first { $0.name == "byHumanName" }?.predicate == "humanName == $humanName")
        let configuration = try IndexConfiguration(json: Data(#"{"entities": {"Human": {"attributes": {"humanName": "humanName"}}}}"#.utf8))
        let resolved = try ResolvedConfiguration(configuration, model: model)
        let searches = resolved.searches
        // byParent compares a relationship, byParentName a key path no attribute holds: not offered.
        #expect(searches.keys.sorted() == ["allHumans", "byHumanName", "oneByHumanName"])
        #expect(searches["byHumanName"]?.filter == "humanName == $humanName" && searches["byHumanName"]?.origin == .model
                && searches["byHumanName"]?.entities == ["Human"] && searches["allHumans"]?.filter == "TRUEPREDICATE")
        // An attribute named otherwise still carries the template, renamed.
        let renamed = try ResolvedConfiguration(try IndexConfiguration(json: Data(#"{"entities": {"Human": {"attributes": {"who": "humanName"}}}}"#.utf8)), model: model)
        #expect(renamed.searches["byHumanName"]?.filter == "who == $humanName")
        // The index keeps them with the configuration; a configuration's own search of that name wins.
        #expect(try IndexConfiguration(json: Data(resolved.stored.json.utf8)).searches == searches)
    }

    static let swiftGenModel = ExporterTests.shared.deletingLastPathComponent().appendingPathComponent("models/rentzsch__mogenerator__test/contents")
}
