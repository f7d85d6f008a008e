/// A named search with `$VARIABLES`, as a Core Data fetch-request template is: `bigCities` =
/// `population > $MIN`, run with `MIN` set to `1000000`.
///
/// Variables may appear in the query (replaced by their text: `$NAME` with `san*` is the prefix `san*`)
/// and in the predicate (replaced by a value: a number, or a string — never by predicate syntax).
public struct SavedSearch: Sendable, Hashable {
    /// Where a saved search was declared.
    public enum Origin: String, Sendable, Hashable {
        /// The configuration's `"searches"`.
        case configuration
        /// A fetch-request template of the store's model (`<fetchRequest>` in the `.xcdatamodel`).
        case model
    }

    /// The name it is run by.
    public var name: String
    /// Words to search for, as ``QueryParser`` reads them, with variables.
    public var query: String?
    /// A filter in `NSPredicate` format (see ``PredicateParser``), with variables.
    public var filter: String?
    /// Only these entities (and their sub-entities).
    public var entities: [String]
    /// The order: `relevance`, `distance`, or an attribute (`population:desc`).
    public var sort: String?
    /// Where it was declared.
    public var origin: Origin
    /// The variables it takes, without `$`, sorted.
    public let variables: [String]

    /// Creates a saved search, checking that its query, predicate and order parse (whatever values its
    /// variables get) and that it searches for something.
    public init(name: String, query: String? = nil, filter: String? = nil, entities: [String] = [], sort: String? = nil,
                origin: Origin = .configuration) throws(SearchIndexError) {
        (self.name, self.query, self.filter, self.entities, self.sort, self.origin) = (name, query, filter, entities, sort, origin)
        var names = Set(query.map(Self.variables(inQuery:)) ?? [])
        if let filter { names.formUnion(try PredicateParser.variables(in: filter)) }
        variables = names.sorted()
        guard query != nil || filter != nil else {
            throw .invalidQuery(reason: "the saved search '\(name)' has neither a query nor a predicate (\"where\")")
        }
        // With every variable set to a plain value, the templates must parse.
        let sample = Dictionary(uniqueKeysWithValues: variables.map { ($0, "1") })  // a number, or text where text is needed
        if let filter { _ = try PredicateParser.parse(filter, variables: sample) }
        if let query { _ = try QueryParser.parse(Self.substitute(query, sample)) }
        _ = try SearchRequest.order(parsing: sort)
    }

    /// The request it stands for, with its variables set. Every variable it takes needs a value and
    /// every value a variable: a misspelt variable is an error, not a silently broader search.
    public func request(variables values: [String: String]) throws(SearchIndexError) -> SearchRequest {
        if let missing = variables.first(where: { values[$0] == nil }) {
            throw .invalidRequest(.missingVariable(search: name, name: missing, variables: variables))
        }
        if let unknown = values.keys.sorted().first(where: { !variables.contains($0) }) {
            throw .invalidRequest(.unknownVariable(search: name, name: unknown, variables: variables))
        }
        let (order, attributeOrder) = try SearchRequest.order(parsing: sort)
        var request = SearchRequest(query: query.map { Self.substitute($0, values) }, entities: entities, sort: order)
        request.sortAttribute = attributeOrder
        if let filter {
            // A value can still make the predicate wrong (`MATCHES $P` with no regular expression): say whose.
            do {
                _ = try PredicateParser.parse(filter, variables: values)
            } catch .invalidPredicate(let reason, let position) {
                throw .invalidQuery(reason: "the saved search '\(name)': its predicate, at character \(position): \(reason)")
            }
            request.filter = filter
            request.filterVariables = values
        }
        return request
    }

    /// The request with a caller's own request added (the command line's words and options): words join
    /// the query, a filter is ANDed (checked alone, so its positions are the caller's and it takes no
    /// variables), entities may narrow the search's own, an order replaces it; places, paging and matching
    /// options are the caller's.
    public func request(variables values: [String: String], refinedBy own: SearchRequest) throws(SearchIndexError) -> SearchRequest {
        var request = try self.request(variables: values)
        let words = [request.query, own.query].compactMap { $0 }.joined(separator: " ")
        request.query = words.isEmpty ? nil : words
        if let filter = own.filter {
            _ = try PredicateParser.parse(filter)
            request.filter = request.filter.map { "(\($0)) AND (\(filter))" } ?? filter
        }
        if !own.entities.isEmpty {
            // The template was checked against its entities: narrowed, never widened.
            if !request.entities.isEmpty, let other = own.entities.first(where: { !request.entities.contains($0) }) {
                throw .invalidRequest(.entityOutsideSavedSearch(search: name, entity: other, entities: request.entities))
            }
            request.entities = own.entities
        }
        if own.sort != nil || own.sortAttribute != nil { (request.sort, request.sortAttribute) = (own.sort, own.sortAttribute) }
        (request.near, request.radius, request.boundingBox) = (own.near, own.radius, own.boundingBox)
        (request.limit, request.offset, request.snippets, request.facets) = (own.limit, own.offset, own.snippets, own.facets)
        (request.exactEntities, request.lastWordIsPrefix, request.typoTolerance) = (own.exactEntities, own.lastWordIsPrefix, own.typoTolerance)
        (request.countsTotal, request.timeLimit) = (own.countsTotal, own.timeLimit)
        return request
    }

    /// `$NAME` occurrences of a query: `$` then a letter or `_`, then letters, digits and `_`.
    static func variables(inQuery text: String) -> [String] {
        occurrences(in: text).map(\.name)
    }

    private static func occurrences(in text: String) -> [(range: Range<Int>, name: String)] {
        let scalars = Array(text.unicodeScalars)
        var found: [(Range<Int>, String)] = []
        var index = 0
        func isStart(_ scalar: Unicode.Scalar) -> Bool { scalar == "_" || scalar.properties.isAlphabetic }
        while index < scalars.count {
            guard scalars[index] == "$", index + 1 < scalars.count, isStart(scalars[index + 1]) else { index += 1; continue }
            var end = index + 1
            while end < scalars.count, isStart(scalars[end]) || scalars[end].properties.numericType != nil { end += 1 }
            found.append((index..<end, String(String.UnicodeScalarView(scalars[(index + 1)..<end]))))
            index = end
        }
        return found
    }

    /// The query with each `$NAME` replaced by its value's text.
    static func substitute(_ text: String, _ values: [String: String]) -> String {
        var scalars = Array(text.unicodeScalars)
        for occurrence in occurrences(in: text).reversed() {
            scalars.replaceSubrange(occurrence.range, with: Array((values[occurrence.name] ?? "").unicodeScalars))
        }
        return String(String.UnicodeScalarView(scalars))
    }
}

extension SearchRequest {
    /// Reads an order: `relevance`, `distance`, or `ATTRIBUTE[:asc|:desc]`.
    public static func order(parsing text: String?) throws(SearchIndexError) -> (Sort?, AttributeOrder?) {
        guard let text else { return (nil, nil) }
        if let builtIn = Sort(rawValue: text) { return (builtIn, nil) }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.count == 1 || ["asc", "desc"].contains(parts[1]) else {
            throw .invalidRequest(.invalidSort(text))
        }
        return (nil, AttributeOrder(name: String(parts[0]), descending: parts.count == 2 && parts[1] == "desc"))
    }
}
