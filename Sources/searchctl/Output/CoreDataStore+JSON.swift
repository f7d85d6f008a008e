import CoreDataStore
import Foundation

/// How domain values print: dates as ISO-8601 UTC, UUIDs as strings, bytes as base64 with their size.
extension AttributeValue {
    /// Bytes beyond this are reported by size only, keeping output usable for large blobs.
    static let base64Limit = 64 * 1024

    var json: JSONValue {
        switch self {
        case .null: .null
        case .integer(let number): .int(number)
        case .boolean(let flag): .bool(flag)
        case .double(let number), .decimal(let number): .double(number)
        case .string(let text), .uri(let text): .string(text)
        case .date(let date): .string(date.iso8601)
        case .uuid(let uuid): .string(uuid.uuidString)
        case .binary(let data), .transformable(let data):
            .object([("bytes", .int(Int64(data.count)))]
                + (data.count <= Self.base64Limit ? [("base64", .string(data.base64EncodedString()))] : []))
        }
    }

    /// A short human rendering for tables.
    var text: String {
        switch self {
        case .null: ""
        case .integer(let number): String(number)
        case .boolean(let flag): flag ? "true" : "false"
        case .double(let number), .decimal(let number): String(number)
        case .string(let text), .uri(let text): text
        case .date(let date): date.iso8601
        case .uuid(let uuid): uuid.uuidString
        case .binary(let data), .transformable(let data): "<\(data.count) bytes>"
        }
    }
}

extension Date {
    /// ISO-8601 in UTC with milliseconds, e.g. `2024-05-10T14:14:07.288Z`.
    var iso8601: String { formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
}

extension ManagedObjectModel {
    /// The `searchctl model` JSON shape.
    func json(store: PersistentStore) -> JSONValue {
        .object([
            ("source", .string(source.name)),
            ("storeUUID", .string(store.metadata.storeUUID)),
            ("versionIdentifiers", .array(versionIdentifiers.map(JSONValue.string))),
            ("entities", .array(entities.map { entity in
                .object([
                    ("name", .string(entity.name)),
                    ("parent", .optional(entity.superentityName)),
                    ("abstract", .bool(entity.isAbstract)),
                    ("attributes", .array(entity.attributes.map { attribute in
                        .object([
                            ("name", .string(attribute.name)),
                            ("type", .string(attribute.type.modelFileName)),
                            ("optional", .bool(attribute.isOptional)),
                            ("transient", .bool(attribute.isTransient)),
                            ("spotlight", .bool(attribute.isIndexedBySpotlight)),
                        ])
                    })),
                    ("relationships", .array(entity.relationships.map { relationship in
                        .object([
                            ("name", .string(relationship.name)),
                            ("destination", .string(relationship.destinationEntityName)),
                            ("toMany", .bool(relationship.isToMany)),
                            ("ordered", .bool(relationship.isOrdered)),
                            ("inverse", .optional(relationship.inverseName)),
                        ])
                    })),
                ])
            })),
        ])
    }

    /// The `searchctl model --format text` outline.
    func text(store: PersistentStore) -> String {
        var lines = ["source: \(source.name)" + (source == .schema ? " (inferred: names are approximate)" : ""),
                     "store UUID: \(store.metadata.storeUUID)"]
        for entity in entities {
            var header = entity.name
            if let parent = entity.superentityName { header += " : \(parent)" }
            if entity.isAbstract { header += " (abstract)" }
            lines.append("")
            lines.append(header)
            for attribute in entity.attributes {
                var flags: [String] = []
                if attribute.isOptional { flags.append("optional") }
                if attribute.isTransient { flags.append("transient") }
                if attribute.isDerived { flags.append("derived") }
                if attribute.isIndexedBySpotlight { flags.append("spotlight") }
                lines.append("  \(attribute.name): \(attribute.type.modelFileName)" + (flags.isEmpty ? "" : "  [\(flags.joined(separator: ", "))]"))
            }
            for relationship in entity.relationships {
                let arity = relationship.isToMany ? (relationship.isOrdered ? "ordered to-many" : "to-many") : "to-one"
                let inverse = relationship.inverseName.map { ", inverse \($0)" } ?? ", no inverse"
                lines.append("  \(relationship.name) → \(relationship.destinationEntityName)  [\(arity)\(inverse)]")
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension HistoryTransaction {
    /// The `searchctl history` JSON shape.
    var json: JSONValue {
        .object([
            ("transaction", .int(number)),
            ("timestamp", .string(timestamp.iso8601)),
            ("author", .optional(author)),
            ("bundleID", .optional(bundleID)),
            ("processID", .optional(processID)),
            ("contextName", .optional(contextName)),
            ("changes", .array(changes.map { change in
                .object([
                    ("uri", .string(change.objectID.uriRepresentation)),
                    ("type", .string(change.type.name)),
                    ("updatedProperties", change.updatedProperties.map { .array($0.map(JSONValue.string)) } ?? .null),
                    ("tombstone", change.tombstone.map { tombstone in
                        .object(tombstone.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
                    } ?? .null),
                ])
            })),
        ])
    }
}

extension ManagedObjectSnapshot {
    /// The `searchctl resolve` JSON shape.
    var json: JSONValue {
        var relationships: [(String, JSONValue)] = toOne.map { ($0.key, .string($0.value.uriRepresentation)) }
        relationships += toMany.map { ($0.key, .array($0.value.map { .string($0.uriRepresentation) })) }
        return .object([
            ("uri", .string(objectID.uriRepresentation)),
            ("entity", .string(entityName)),
            ("attributes", .object(attributes.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })),
            ("relationships", .object(relationships.sorted { $0.0 < $1.0 })),
        ])
    }
}
