import Foundation

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

        /// Creates fields; nil ones take the defaults.
        public init(displayName: String? = nil, title: String? = nil, text: [String]? = nil, keywords: [String]? = nil,
                    latitude: String? = nil, longitude: String? = nil, date: String? = nil, rank: String? = nil) {
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
                         date: other.date ?? date, rank: other.rank ?? rank)
        }
    }

    /// One entity's entry: its fields, or excluded.
    public enum Entry: Sendable, Hashable {
        case fields(EntityFields)
        case excluded
    }

    /// Entries by entity name.
    public var entities: [String: Entry]

    /// Creates a configuration.
    public init(entities: [String: Entry] = [:]) {
        self.entities = entities
    }

    /// Why a configuration file cannot be used.
    public struct LoadError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Reads `--config` JSON: `{"entities": {"Place": {"displayName": "name", …}, "Page": false}}`.
    public init(json data: Data, path: String = "configuration") throws(LoadError) {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LoadError(description: "\(path) is not a JSON object; see the configuration format in the README")
        }
        let unknownKeys = Set(root.keys).subtracting(["entities"])
        guard unknownKeys.isEmpty else {
            throw LoadError(description: "\(path): unknown key '\(unknownKeys.sorted()[0])'; the configuration has only \"entities\"")
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
            let known: Set<String> = ["displayName", "title", "text", "keywords", "latitude", "longitude", "date", "rank"]
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
            entities[name] = .fields(EntityFields(
                displayName: try single("displayName"), title: try single("title"), text: try many("text"),
                keywords: try many("keywords"), latitude: try single("latitude"), longitude: try single("longitude"),
                date: try single("date"), rank: try single("rank")))
        }
        self.entities = entities
    }
}
