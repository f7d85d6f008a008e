import Foundation
import SearchIndex

extension IndexConfiguration: Encodable {
    /// The configuration as JSON, in the configuration file format: keys sorted, written by Foundation's
    /// encoder (every string escaped as JSON requires), read back by ``init(json:path:)`` as it was.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Strings, Booleans, arrays and dictionaries of them always encode: the empty object is unreachable.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// A key named at run time (entity, attribute and search names).
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        var entries = container.nestedContainer(keyedBy: Key.self, forKey: Key("entities"))
        for (name, entry) in entities {
            switch entry {
            case .excluded: try entries.encode(false, forKey: Key(name))
            case .fields(let fields): try entries.encode(fields, forKey: Key(name))
            }
        }
        guard !searches.isEmpty else { return }
        var saved = container.nestedContainer(keyedBy: Key.self, forKey: Key("searches"))
        for (name, search) in searches {
            var members = saved.nestedContainer(keyedBy: Key.self, forKey: Key(name))
            try members.encodeIfPresent(search.query, forKey: Key("query"))
            try members.encodeIfPresent(search.filter, forKey: Key("where"))
            // One entity as a string, several as a list: as the file format reads them.
            if search.entities.count == 1 {
                try members.encode(search.entities[0], forKey: Key("entity"))
            } else if !search.entities.isEmpty {
                try members.encode(search.entities, forKey: Key("entity"))
            }
            try members.encodeIfPresent(search.sort, forKey: Key("sort"))
            if search.origin == .model { try members.encode("model", forKey: Key("from")) }
        }
    }
}

extension IndexConfiguration.EntityFields: Encodable {
    private enum CodingKeys: String, CodingKey {
        case displayName, title, text, keywords, latitude, longitude, date, rank, attributes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(displayName, forKey: .displayName)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(text, forKey: .text)
        try container.encodeIfPresent(keywords, forKey: .keywords)
        try container.encodeIfPresent(latitude, forKey: .latitude)
        try container.encodeIfPresent(longitude, forKey: .longitude)
        try container.encodeIfPresent(date, forKey: .date)
        try container.encodeIfPresent(rank, forKey: .rank)
        try container.encodeIfPresent(attributes, forKey: .attributes)
    }
}
