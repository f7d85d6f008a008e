import Foundation
import SearchIndex

/// What to index and how: per entity, expressions for each item field (DESIGN §4). An entity's entry
/// overrides only the fields it names; `false` leaves the entity out. Decoded from and printed as JSON.
public struct IndexConfiguration: Sendable, Hashable {
    /// The fields of one entity's items, each an expression in `NSExpression` format.
    public struct EntityFields: Sendable, Hashable {
        public var displayName: String?
        public var title: String?
        public var text: [String]?
        public var keywords: [String]?
        public var latitude: String?
        public var longitude: String?
        public var date: String?
        public var rank: String?
        /// Attributes to filter, sort and count by (`population > 1000000`): name → expression.
        public var attributes: [String: String]?

        /// Creates fields; nil ones take the defaults.
        public init(displayName: String? = nil, title: String? = nil, text: [String]? = nil, keywords: [String]? = nil,
                    latitude: String? = nil, longitude: String? = nil, date: String? = nil, rank: String? = nil,
                    attributes: [String: String]? = nil) {
            self.attributes = attributes
            self.displayName = displayName
            self.title = title
            self.text = text
            self.keywords = keywords
            self.latitude = latitude
            self.longitude = longitude
            self.date = date
            self.rank = rank
        }

        /// Fields of `other` where it names them, these elsewhere.
        func overridden(by other: EntityFields) -> EntityFields {
            EntityFields(displayName: other.displayName ?? displayName, title: other.title ?? title, text: other.text ?? text,
                         keywords: other.keywords ?? keywords, latitude: other.latitude ?? latitude, longitude: other.longitude ?? longitude,
                         date: other.date ?? date, rank: other.rank ?? rank,
                         // A sub-entity adds attributes to its parent's (and may redefine one).
                         attributes: attributes.map { $0.merging(other.attributes ?? [:]) { _, new in new } } ?? other.attributes)
        }
    }

    /// One entity's entry: its fields, or excluded.
    public enum Entry: Sendable, Hashable {
        case fields(EntityFields)
        case excluded
    }

    /// Entries by entity name.
    public var entities: [String: Entry]
    /// Saved searches by name (`"searches": {"bigCities": {"where": "population > $MIN"}}`), and the
    /// model's fetch-request templates that the index can run (origin `model`).
    public var searches: [String: SavedSearch]

    /// Creates a configuration.
    public init(entities: [String: Entry] = [:], searches: [String: SavedSearch] = [:]) {
        self.entities = entities
        self.searches = searches
    }

    /// Whether a name can be an attribute in a filter predicate.
    static func isAttributeName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || ("a"..."z").contains(first) || ("A"..."Z").contains(first), name.count <= 64 else { return false }
        let reserved: Set<String> = ["AND", "OR", "NOT", "IN", "BETWEEN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "TRUEPREDICATE",
                                     "FALSEPREDICATE", "YES", "NO", "TRUE", "FALSE", "NIL", "NULL", "CAST"]
        return !reserved.contains(name.uppercased())
            && name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    /// Why a configuration file cannot be used.
    public struct LoadError: Error, Sendable, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Reads configuration JSON: `{"entities": {"Place": {"displayName": "name", …}, "Page": false}}`.
    public init(json data: Data, path: String = "configuration") throws(LoadError) {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LoadError(description: "\(path) is not a JSON object; see the configuration format in the README")
        }
        let unknownKeys = Set(root.keys).subtracting(["entities", "searches"])
        guard unknownKeys.isEmpty else {
            throw LoadError(description: "\(path): unknown key '\(unknownKeys.sorted()[0])'; the configuration has \"entities\" and \"searches\"")
        }
        searches = try Self.searches(root["searches"], path: path)
        if let value = root["entities"], !(value is [String: Any]) {
            throw LoadError(description: "\(path): entities must be an object: {\"Place\": {\"displayName\": \"name\"}, \"Log\": false}")
        }
        var entities: [String: Entry] = [:]
        for (name, value) in (root["entities"] as? [String: Any]) ?? [:] {
            if let flag = value as? Bool {
                entities[name] = flag ? .fields(EntityFields()) : .excluded
                continue
            }
            guard let object = value as? [String: Any] else {
                throw LoadError(description: "\(path): entities.\(name) must be an object of fields or false")
            }
            let known: Set<String> = ["displayName", "title", "text", "keywords", "latitude", "longitude", "date", "rank", "attributes"]
            if let unknown = Set(object.keys).subtracting(known).sorted().first {
                throw LoadError(description: "\(path): entities.\(name).\(unknown) is not a field; fields are " + known.sorted().joined(separator: ", "))
            }
            func single(_ key: String) throws(LoadError) -> String? {
                guard let value = object[key] else { return nil }
                guard let text = value as? String else { throw LoadError(description: "\(path): entities.\(name).\(key) must be an expression string") }
                return text
            }
            func many(_ key: String) throws(LoadError) -> [String]? {
                guard let value = object[key] else { return nil }
                if let text = value as? String { return [text] }
                guard let list = value as? [String] else { throw LoadError(description: "\(path): entities.\(name).\(key) must be a list of expression strings") }
                return list
            }
            var attributes: [String: String]?
            if let value = object["attributes"] {
                guard let map = value as? [String: String] else {
                    throw LoadError(description: "\(path): entities.\(name).attributes must be an object of name → expression strings")
                }
                // Names a predicate can say: `population`, `country_code`.
                if let bad = map.keys.sorted().first(where: { !Self.isAttributeName($0) }) {
                    throw LoadError(description: "\(path): entities.\(name).attributes: '\(bad)' is not a name a filter can use (letters, digits and _, not starting with a digit, not AND/OR/NOT)")
                }
                attributes = map
            }
            entities[name] = .fields(EntityFields(
                displayName: try single("displayName"), title: try single("title"), text: try many("text"),
                keywords: try many("keywords"), latitude: try single("latitude"), longitude: try single("longitude"),
                date: try single("date"), rank: try single("rank"), attributes: attributes))
        }
        self.entities = entities
    }

    /// Reads `"searches"`: name → {"query", "where", "entity" (a name or a list), "sort", "from"}.
    private static func searches(_ value: Any?, path: String) throws(LoadError) -> [String: SavedSearch] {
        guard let value else { return [:] }
        guard let map = value as? [String: Any] else {
            throw LoadError(description: "\(path): searches must be an object of name → {\"query\", \"where\", \"entity\", \"sort\"}")
        }
        var searches: [String: SavedSearch] = [:]
        for (name, value) in map {
            guard !name.isEmpty, name.count <= 64, name.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }) else {
                throw LoadError(description: "\(path): searches: '\(name)' is not a name a search can be run by (letters, digits, _ and -)")
            }
            guard let object = value as? [String: Any] else { throw LoadError(description: "\(path): searches.\(name) must be an object") }
            let known: Set<String> = ["query", "where", "entity", "sort", "from"]
            if let unknown = Set(object.keys).subtracting(known).sorted().first {
                throw LoadError(description: "\(path): searches.\(name).\(unknown) is not understood; a saved search has " + known.sorted().joined(separator: ", "))
            }
            func text(_ key: String) throws(LoadError) -> String? {
                guard let value = object[key] else { return nil }
                guard let text = value as? String else { throw LoadError(description: "\(path): searches.\(name).\(key) must be a string") }
                return text
            }
            var entities: [String] = []
            if let value = object["entity"] {
                if let one = value as? String { entities = [one] } else if let many = value as? [String] { entities = many } else {
                    throw LoadError(description: "\(path): searches.\(name).entity must be an entity name or a list of them")
                }
            }
            let origin: SavedSearch.Origin
            switch try text("from") {
            case nil, "configuration"?: origin = .configuration
            case "model"?: origin = .model
            case let other?: throw LoadError(description: "\(path): searches.\(name).from is '\(other)'; it is \"configuration\" or \"model\"")
            }
            let (query, filter, sort) = (try text("query"), try text("where"), try text("sort"))
            do throws(SearchIndexError) {
                searches[name] = try SavedSearch(name: name, query: query, filter: filter, entities: entities, sort: sort, origin: origin)
            } catch {
                if case .invalidPredicate(let reason, let position) = error {
                    throw LoadError(description: "\(path): searches.\(name).where, character \(position): \(reason)")
                }
                throw LoadError(description: "\(path): searches.\(name): \(error.description)")
            }
        }
        return searches
    }
}
