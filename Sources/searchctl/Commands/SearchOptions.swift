import ArgumentParser
import Foundation
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

    /// `--sort` spelled right, checked while parsing (a usage error, like every other option's).
    func validate() throws {
        _ = try Self.order(sort)
    }

    /// `--sort`: a built-in order, or an attribute with its direction.
    static func order(_ sort: String?) throws -> (SearchRequest.Sort?, AttributeOrder?) {
        guard let sort else { return (nil, nil) }
        if let builtIn = SearchRequest.Sort(rawValue: sort) { return (builtIn, nil) }
        let parts = sort.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.count == 1 || ["asc", "desc"].contains(parts[1]) else {
            throw ValidationError("--sort takes relevance, distance or ATTRIBUTE[:asc|:desc] (population:desc); got '\(sort)'")
        }
        return (nil, AttributeOrder(name: String(parts[0]), descending: parts.count == 2 && parts[1] == "desc"))
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
        let (order, attributeOrder) = try Self.order(sort)
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


