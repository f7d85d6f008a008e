import ArgumentParser
import Foundation
import Indexer
import SearchIndex

/// What to search for and where: shared by `search` and `explain`.
struct SearchOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("What to look for: words, \"phrases\", prefix*, OR, -excluded (omit to search by place alone). "
                                 + "Words need no quotes: search buenos aires", valueName: "query"))
    var words: [String] = []

    /// The query as one string: unquoted words are joined, as a person means them.
    var query: String? { words.isEmpty ? nil : words.joined(separator: " ") }

    @OptionGroup var location: IndexLocation

    @Option(name: .customLong("entity"), help: "Only this entity and its sub-entities, as a Core Data fetch (repeatable).")
    var entities: [String] = []

    @Flag(help: "--entity matches exactly that entity, not its sub-entities.")
    var exactEntity = false

    // Values may start with a minus sign (a southern latitude, a western first corner): .unconditional
    // takes the next word as the value even when it looks like an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Reference point: LAT,LON (south and west are negative: -33.87,151.21).", valueName: "lat,lon"))
    var near: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Keep hits within this distance of --near.", valueName: "distance"))
    var radius: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Keep hits inside MINLAT,MINLON,MAXLAT,MAXLON (MINLON > MAXLON crosses 180°).", valueName: "box"))
    var bbox: String?

    @Option(help: ArgumentHelp("relevance, distance, or an attribute: population:desc, updated:asc.", valueName: "order"))
    var sort: String?

    @Option(name: .customLong("facet"), help: ArgumentHelp("Count the values of this attribute over every match (repeatable).", valueName: "attribute"))
    var facets: [String] = []

    @Option(help: "Hits to print.")
    var limit = 20

    @Option(help: "Hits to skip.")
    var offset = 0

    @Option(name: .customLong("where"), parsing: .unconditional,
            help: ArgumentHelp("Keep items whose attributes match this NSPredicate: 'population > 1000000 AND country == \"JP\"'.", valueName: "predicate"))
    var filter: String?

    @Flag(help: "The last word is a prefix, for search as you type: 'san fr' finds San Francisco.")
    var prefixLast = false

    @Option(help: ArgumentHelp("Run a saved search of the configuration (or a fetch request of the model); see searchctl saved.", valueName: "name"))
    var saved: String?

    @Option(name: .customLong("var"), help: ArgumentHelp("A value for the saved search's $VARIABLE (repeatable): --var MIN=1000000.", valueName: "name=value"))
    var variables: [String] = []

    @Flag(help: "Words match only as typed: no typo tolerance (zurch no longer finds Zürich).")
    var exact = false

    @Flag(help: "Include text around the matches.")
    var snippets = false

    static func numbers(_ text: String, count: Int, option: String) throws -> [Double] {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == count, parts.allSatisfy({ $0 != nil }) else {
            throw ValidationError("--\(option) takes \(count) comma-separated numbers, got '\(text)'")
        }
        return parts.compactMap { $0 }
    }

    static func meters(_ text: String) throws -> Double {
        let units: [(String, Double)] = [("km", 1_000), ("mi", 1_609.344), ("m", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)) { return value * factor }
        }
        guard let value = Double(text) else { throw ValidationError("--radius takes a distance like 500m, 25km, 10mi, or meters; got '\(text)'") }
        return value
    }

    /// `--sort` and `--var` spelled right, checked while parsing (usage errors, like every other option's).
    func validate() throws {
        do { _ = try SearchRequest.order(parsing: sort) } catch { throw ValidationError(error.commandLineMessage) }
        _ = try variableValues()
        if !variables.isEmpty && saved == nil { throw ValidationError("--var sets a saved search's variable: add --saved NAME") }
    }

    /// `--var NAME=VALUE` options as a dictionary.
    func variableValues() throws -> [String: String] {
        var values: [String: String] = [:]
        for argument in variables {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw ValidationError("--var takes NAME=VALUE (MIN=1000000); got '\(argument)'")
            }
            let name = String(argument[..<equals].drop { $0 == "$" })
            guard values.updateValue(String(argument[argument.index(after: equals)...]), forKey: name) == nil else {
                throw ValidationError("--var \(name) is given twice")
            }
        }
        return values
    }

    /// The request: the saved search's (variables set), if any, with the command line's words, filter and
    /// order added to it.
    func request(in index: any IndexReader) throws -> SearchRequest {
        guard let saved else { return try request() }
        return try index.savedSearch(named: saved).request(variables: try variableValues(), refinedBy: try request())
    }

    func request() throws -> SearchRequest {
        let center = try near.map { text -> Coordinate in
            let values = try Self.numbers(text, count: 2, option: "near")
            return try Coordinate(latitude: values[0], longitude: values[1])
        }
        let box = try bbox.map { text -> BoundingBox in
            let values = try Self.numbers(text, count: 4, option: "bbox")
            return try BoundingBox(minLatitude: values[0], minLongitude: values[1], maxLatitude: values[2], maxLongitude: values[3])
        }
        let (order, attributeOrder) = try SearchRequest.order(parsing: sort)
        var request = SearchRequest(query: query, entities: entities, near: center, radius: try radius.map(Self.meters), boundingBox: box,
                                    sort: order, limit: limit, offset: offset, snippets: snippets)
        request.sortAttribute = attributeOrder
        request.facets = facets
        request.exactEntities = exactEntity
        request.lastWordIsPrefix = prefixLast
        request.typoTolerance = !exact
        request.filter = filter
        return request
    }
}
