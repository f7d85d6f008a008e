import CoreDataStore
import Foundation
import SearchIndex

/// Digests of what indexed items show of the objects they reach through relationships.
///
/// An object that indexed items show through a relationship (a country, whose name its places' text
/// holds) gets a digest of everything those items read from it: each key path's rest from it, and the
/// object its first inverse step leads to when that step is a to-one relationship (the dependents it
/// has). Equal to the digest saved when its dependents were last indexed, it cannot change them — a
/// place joining the country changes the country's row and history, but not what its other places
/// show, and the joining place is itself in history. Anything a digest cannot describe (a key-path
/// step that is no property) has none, and its dependents are re-indexed whenever it changes.
struct ShownValueDigests: Sendable {
    let configuration: ResolvedConfiguration
    /// Which indexed objects show which related entities (``ItemBuilder/dependencies()``).
    let dependencies: [String: [ItemBuilder.Dependency]]

    /// The digests of those `objects` that indexed items show, by URI. Fetches what the key paths' rests
    /// need again, with the relationships they follow.
    func digests(of objects: some Sequence<ManagedObjectID>, in snapshot: StoreSnapshot) throws -> [String: String] {
        let model = configuration.model
        var result: [String: String] = [:]
        for (entity, ids) in Dictionary(grouping: objects, by: \.entityName) {
            let entries = entries(for: entity)
            guard !entries.isEmpty else { continue }
            let firstSteps = Set(entries.flatMap(\.suffixes).compactMap(\.first).filter { model.relationship($0, of: entity)?.isToMany == true })
            for object in try snapshot.objects(ids, relationships: .toOneAnd(firstSteps)).values {
                if let digest = try digest(of: object, entries: entries, in: snapshot) { result[object.objectID.uriRepresentation] = digest }
            }
        }
        return result
    }

    /// The dependency entries keyed under an entity or one of its ancestors.
    func entries(for entity: String) -> [ItemBuilder.Dependency] {
        configuration.model.ancestors(of: entity).reversed().flatMap { dependencies[$0] ?? [] } + (dependencies[entity] ?? [])
    }

    /// What the dependents of `object` read from it, hashed; nil when a key path cannot be followed.
    func digest(of object: ManagedObjectSnapshot, entries: [ItemBuilder.Dependency], in snapshot: StoreSnapshot) throws -> String? {
        let model = configuration.model
        var parts: [String] = []
        for entry in entries {
            parts.append("\(entry.indexed) \(entry.inverses.joined(separator: "."))")
            if let first = entry.inverses.first, model.relationship(first, of: object.entityName)?.isToMany == false {
                parts.append("→" + ((object.toOne[first] ?? nil)?.uriRepresentation ?? "nil"))
            }
            for suffix in entry.suffixes.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                guard let values = try values(along: suffix, from: object, in: snapshot) else { return nil }
                parts.append(suffix.joined(separator: ".") + "=" + values.joined(separator: "\u{1F}"))
            }
        }
        return ResolvedConfiguration.fnv1a(parts.joined(separator: "\u{1E}")) + "-\(parts.reduce(0) { $0 + $1.utf8.count })"
    }

    /// The values at the end of a key path from `object` (related objects by URI, to-many in key order);
    /// nil when a step is an operator.
    func values(along path: [String], from object: ManagedObjectSnapshot, in snapshot: StoreSnapshot) throws -> [String]? {
        let model = configuration.model
        var current = [object]
        for (step, name) in path.enumerated() {
            let isLast = step == path.count - 1
            var next: [ManagedObjectID] = []
            var values: [String] = []
            for object in current {
                // An operator (@count, @sum…) is not followed here: the object's dependents are always re-indexed.
                if name.hasPrefix("@") { return nil }
                if model.attribute(name, of: object.entityName) != nil {
                    guard isLast else { return nil }
                    values.append(Self.encoded(object.attributes[name] ?? .null))
                } else if let relationship = model.relationship(name, of: object.entityName) {
                    let destinations = relationship.isToMany
                        ? (object.toMany[name] ?? []).sorted { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) }
                        : [(object.toOne[name] ?? nil)].compactMap { $0 }
                    if isLast { values += destinations.map { $0.uriRepresentation } } else { next += destinations }
                } else {
                    // A property of another entity of the hierarchy: this object's dependents read nothing
                    // there, and its entity never changes.
                    values.append("∅")
                }
            }
            if isLast { return values }
            let following = path[step + 1]
            let toMany = Set(next.compactMap { model.relationship(following, of: $0.entityName)?.isToMany == true ? following : nil })
            let fetched = try snapshot.objects(next, relationships: .toOneAnd(toMany))
            current = next.compactMap { fetched[$0] }
        }
        return ["self"]
    }

    /// A value's bytes as text, its kind first: equal texts are equal values.
    static func encoded(_ value: AttributeValue) -> String {
        switch value {
        case .null: "n"
        case .integer(let number): "i\(number)"
        case .boolean(let flag): "b\(flag)"
        case .double(let number), .decimal(let number): "d\(number.bitPattern)"
        case .string(let text): "s" + text
        case .date(let date): "t\(date.timeIntervalSinceReferenceDate.bitPattern)"
        case .uuid(let uuid): "u" + uuid.uuidString
        case .uri(let text): "r" + text
        case .binary(let data), .transformable(let data): "x" + data.base64EncodedString()
        }
    }
}
