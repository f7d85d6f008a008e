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
/// show, and the joining place is itself in history. Anything a digest cannot describe (a key path
/// through an operator such as `@count`, or on through an attribute's value) has none, and its dependents are re-indexed whenever it changes.
struct ShownValueDigests: Sendable {
    let configuration: ResolvedConfiguration
    /// The dependency entries that apply to each entity: its own and its ancestors' (computed once).
    private let entriesByEntity: [String: [ItemBuilder.Dependency]]

    /// The digests of what `dependencies` (``ItemBuilder/dependencies()``) show.
    init(configuration: ResolvedConfiguration, dependencies: [String: [ItemBuilder.Dependency]]) {
        self.configuration = configuration
        let model = configuration.model
        var entries: [String: [ItemBuilder.Dependency]] = [:]
        for entity in model.entities.map(\.name) {
            let all = model.ancestors(of: entity).reversed().flatMap { dependencies[$0] ?? [] } + (dependencies[entity] ?? [])
            if !all.isEmpty { entries[entity] = all }
        }
        entriesByEntity = entries
    }

    /// The digests of those `objects` that indexed items show. Objects fetched without a to-many
    /// relationship a key path's rest starts with are fetched again with it.
    func digests(of objects: [ManagedObjectSnapshot], in snapshot: StoreSnapshot) throws -> [ManagedObjectID: String] {
        var result: [ManagedObjectID: String] = [:]
        for (entity, group) in Dictionary(grouping: objects, by: \.entityName) {
            let entries = entries(for: entity)
            guard !entries.isEmpty else { continue }
            let objects = try Self.reading(group, with: toManyFirstSteps(of: entity, entries: entries), in: snapshot)
            // What the suffixes pass through on their way, fetched a level at a time for the whole group.
            let graph = try reached(from: objects, entries: entries, in: snapshot)
            for object in objects {
                if let digest = digest(of: object, entries: entries, graph: graph) { result[object.objectID] = digest }
            }
        }
        return result
    }

    /// The to-many relationships objects of `entity` must come with for their digests (none when items
    /// show nothing of them): a page read with them is not read again.
    func toManyFirstSteps(of entity: String) -> Set<String> {
        let entries = entries(for: entity)
        return entries.isEmpty ? [] : toManyFirstSteps(of: entity, entries: entries)
    }

    /// Those objects named that indexed items show, read with what their digests need (the to-many first
    /// steps of the suffixes), not yet with their dependents (see ``withFirstInverses(_:in:)``).
    func objects(_ ids: some Collection<ManagedObjectID>, in snapshot: StoreSnapshot) throws -> [ManagedObjectSnapshot] {
        var objects: [ManagedObjectSnapshot] = []
        for (entity, group) in Dictionary(grouping: ids, by: \.entityName) {
            let entries = entries(for: entity)
            guard !entries.isEmpty else { continue }
            objects += try snapshot.objects(group, relationships: .toOneAnd(toManyFirstSteps(of: entity, entries: entries))).values
        }
        return objects
    }

    /// `objects` (from ``objects(_:in:)``) with the to-many first inverses their dependents' expansion
    /// (``DependentExpansion``) starts from, read again only for those that lack one.
    ///
    /// Read apart from the digests because most changed objects need none: a place joining a country
    /// changes the country, whose digest stays equal, and reading its thousands of places for nothing cost a
    /// fifth of a storm's history batches.
    func withFirstInverses(_ objects: [ManagedObjectSnapshot], in snapshot: StoreSnapshot) throws -> [ManagedObjectSnapshot] {
        var result: [ManagedObjectSnapshot] = []
        for (entity, group) in Dictionary(grouping: objects, by: \.entityName) {
            let entries = entries(for: entity)
            let inverses = entries.compactMap(\.inverses.first).filter { configuration.model.relationship($0, of: entity)?.isToMany == true }
            result += try Self.reading(group, with: toManyFirstSteps(of: entity, entries: entries).union(inverses), in: snapshot)
        }
        return result
    }

    /// `objects` (of one entity) as they are when each has the `toMany` relationships, else read again with them.
    private static func reading(_ objects: [ManagedObjectSnapshot], with toMany: Set<String>, in snapshot: StoreSnapshot) throws -> [ManagedObjectSnapshot] {
        guard !objects.allSatisfy({ object in toMany.allSatisfy { object.toMany[$0] != nil } }) else { return objects }
        return Array(try snapshot.objects(objects.map(\.objectID), relationships: .toOneAnd(toMany)).values)
    }

    /// Whether indexed items show anything of the entity's objects.
    func isShown(_ entity: String) -> Bool { entriesByEntity[entity] != nil }

    /// The to-many relationships of `entity` the rests of key paths start with.
    private func toManyFirstSteps(of entity: String, entries: [ItemBuilder.Dependency]) -> Set<String> {
        Set(entries.flatMap(\.suffixes).compactMap(\.first).filter { configuration.model.relationship($0, of: entity)?.isToMany == true })
    }

    /// The dependency entries keyed under an entity or one of its ancestors.
    func entries(for entity: String) -> [ItemBuilder.Dependency] { entriesByEntity[entity] ?? [] }

    /// The objects the suffixes of `entries` pass through from `objects` before their last step, each fetched
    /// once, a level at a time, with the to-many relationship its next step follows.
    private func reached(from objects: [ManagedObjectSnapshot], entries: [ItemBuilder.Dependency],
                         in snapshot: StoreSnapshot) throws -> [ManagedObjectID: ManagedObjectSnapshot] {
        let model = configuration.model
        var graph: [ManagedObjectID: ManagedObjectSnapshot] = [:]
        // Operators are not followed (see `values(along:from:graph:)`): their objects get no digest.
        let paths = Set(entries.flatMap(\.suffixes)).filter { $0.count > 1 && !$0.contains { $0.hasPrefix("@") } }
        var frontier: [(object: ManagedObjectSnapshot, rest: [String])] = objects.flatMap { object in paths.map { (object, $0) } }
        while !frontier.isEmpty {
            // The objects the next step leads to, with the to-many relationships the step after it follows.
            var wanted: [ManagedObjectID: Set<[String]>] = [:]
            for (object, rest) in frontier {
                guard rest.count > 1, let relationship = model.relationship(rest[0], of: object.entityName) else { continue }
                let destinations = relationship.isToMany ? object.toMany[rest[0]] ?? [] : [(object.toOne[rest[0]] ?? nil)].compactMap { $0 }
                for destination in destinations { wanted[destination, default: []].insert(Array(rest.dropFirst())) }
            }
            let missing = wanted.keys.filter { id in
                guard let known = graph[id] else { return true }
                return wanted[id, default: []].contains { rest in
                    model.relationship(rest[0], of: id.entityName)?.isToMany == true && known.toMany[rest[0]] == nil
                }
            }
            if !missing.isEmpty {
                let toMany = Set(missing.flatMap { id in
                    wanted[id, default: []].compactMap { model.relationship($0[0], of: id.entityName)?.isToMany == true ? $0[0] : nil }
                })
                for (id, object) in try snapshot.objects(missing, relationships: .toOneAnd(toMany)) { graph[id] = object }
            }
            frontier = wanted.flatMap { id, rests in graph[id].map { object in rests.map { (object, $0) } } ?? [] }
        }
        return graph
    }

    /// What the dependents of `object` read from it, hashed; nil when a key path's rest holds an operator.
    func digest(of object: ManagedObjectSnapshot, entries: [ItemBuilder.Dependency], graph: [ManagedObjectID: ManagedObjectSnapshot]) -> String? {
        let model = configuration.model
        var parts: [String] = []
        for entry in entries {
            parts.append("\(entry.indexed) \(entry.inverses.joined(separator: "."))")
            if let first = entry.inverses.first, model.relationship(first, of: object.entityName)?.isToMany == false {
                parts.append("→" + ((object.toOne[first] ?? nil)?.uriRepresentation ?? "nil"))
            }
            for suffix in entry.suffixes.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                guard let values = values(along: suffix, from: object, graph: graph) else { return nil }
                parts.append(suffix.joined(separator: ".") + "=" + values.joined(separator: "\u{1F}"))
            }
        }
        return FNV1a.hex(parts.joined(separator: "\u{1E}")) + "-\(parts.reduce(0) { $0 + $1.utf8.count })"
    }

    /// The values at the end of a key path from `object` (related objects by URI, to-many in key order), after
    /// the objects on the way (by URI, looked up in `graph`); nil when the path holds an operator or goes on
    /// through an attribute.
    ///
    /// The objects on the way count: an object's saved digest is not refreshed when a farther one changes (a
    /// region's when its country is renamed, which re-indexes the places itself), so the region moved to
    /// another country named as the first one was must still differ from it.
    func values(along path: [String], from object: ManagedObjectSnapshot, graph: [ManagedObjectID: ManagedObjectSnapshot]) -> [String]? {
        let model = configuration.model
        // An operator (@count, @sum…) is not followed here: the object's dependents are always re-indexed.
        guard !path.contains(where: { $0.hasPrefix("@") }) else { return nil }
        var current = [object]
        var way: [String] = []
        for (step, name) in path.enumerated() {
            let isLast = step == path.count - 1
            var next: [ManagedObjectID] = []
            var values: [String] = []
            for object in current {
                if model.attribute(name, of: object.entityName) != nil {
                    // A path on through an attribute's value: not digested, always re-indexed.
                    guard isLast else { return nil }
                    values.append(Self.encoded(object.attributes[name] ?? .null))
                } else if let relationship = model.relationship(name, of: object.entityName) {
                    let destinations = relationship.isToMany
                        ? (object.toMany[name] ?? []).sorted { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) }
                        : [(object.toOne[name] ?? nil)].compactMap { $0 }
                    if isLast {
                        values += destinations.map { $0.uriRepresentation }
                    } else {
                        next += destinations
                        way += destinations.map { "→" + $0.uriRepresentation }
                    }
                } else {
                    // A property of another entity of the hierarchy: this object's dependents read nothing
                    // there, and its entity never changes.
                    values.append("∅")
                }
            }
            if isLast { return way + values }
            current = next.compactMap { graph[$0] }
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
