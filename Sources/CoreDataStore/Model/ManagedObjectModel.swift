/// A Core Data model: entities, their hierarchy and properties, and where the description came from.
///
/// Entities are value types linked by name, so a model is `Sendable` and cheap to share between the
/// reader, the writer and the exporter. Hierarchy questions (inherited properties, sub-entities, the
/// root that owns the table) are answered from precomputed indexes.
public struct ManagedObjectModel: Sendable {
    /// Where a model description came from, best first.
    public enum Source: Sendable, Hashable {
        /// Decoded from the store's own `Z_MODELCACHE` archive: exactly what wrote the store.
        case modelCache
        /// Read from an Xcode model file (`.xcdatamodeld`, `.xcdatamodel` or its `contents`).
        case modelFile(path: String)
        /// Inferred from the store's tables; names and types are approximate.
        case schema
        /// Built in code.
        case code

        /// The source's name, as a command line prints it (`modelcache`, `xcdatamodel`, …).
        public var name: String {
            switch self {
            case .modelCache: "modelcache"
            case .modelFile: "xcdatamodel"
            case .schema: "schema"
            case .code: "code"
            }
        }
    }

    /// All entities, sorted by name.
    public let entities: [EntityDescription]
    /// The model's version identifiers (`userDefinedModelVersionIdentifier`).
    public let versionIdentifiers: [String]
    /// Where the description came from.
    public var source: Source
    /// The model's stored fetch requests (from an `.xcdatamodel` file, or decoded from the archive of a
    /// store's model cache), by name.
    public var fetchRequestTemplates: [FetchRequestTemplate] = []

    private let indexByName: [String: Int]
    private let childrenByName: [String: [String]]

    /// Creates a model from entities; fails when parents, destinations or inverses do not resolve.
    public init(entities: [EntityDescription], versionIdentifiers: [String] = [], source: Source = .code) throws(CoreDataStoreError) {
        let sorted = entities.sorted { $0.name < $1.name }
        var index: [String: Int] = [:]
        for (position, entity) in sorted.enumerated() {
            guard index.updateValue(position, forKey: entity.name) == nil else {
                throw .invalidModel(reason: "entity \(entity.name) is declared twice")
            }
        }
        // Names become URI path segments and SQL column names: anything but an identifier is hostile.
        for entity in sorted {
            guard Self.isIdentifier(entity.name) else {
                throw .invalidModel(reason: "an entity is named \(Self.quoted(entity.name)), which is not a name Core Data allows")
            }
            let properties = entity.attributes.map(\.name) + entity.relationships.map(\.name) + entity.relationships.map(\.destinationEntityName)
            if let bad = properties.first(where: { !Self.isIdentifier($0) }) {
                throw .invalidModel(reason: "entity \(entity.name) has a property named \(Self.quoted(bad)), which is not a name Core Data allows")
            }
        }
        var children: [String: [String]] = [:]
        for entity in sorted {
            guard let parent = entity.superentityName else { continue }
            guard index[parent] != nil else {
                throw .invalidModel(reason: "entity \(entity.name) names a parent entity \(parent) that does not exist")
            }
            children[parent, default: []].append(entity.name)
        }
        self.entities = sorted
        self.versionIdentifiers = versionIdentifiers.sorted()
        self.source = source
        self.indexByName = index
        self.childrenByName = children
        // Walk each chain to its root: a cycle in parent links would otherwise hang every hierarchy walk.
        for entity in sorted {
            var seen: Set<String> = [entity.name]
            var current = entity
            while let parent = current.superentityName, let next = self.entity(named: parent) {
                guard seen.insert(parent).inserted else {
                    throw .invalidModel(reason: "entity \(entity.name) inherits from itself")
                }
                current = next
            }
        }
        for entity in sorted {
            for relationship in entity.relationships where self.entity(named: relationship.destinationEntityName) == nil {
                throw .invalidModel(reason: "relationship \(entity.name).\(relationship.name) points at an entity \(relationship.destinationEntityName) that does not exist")
            }
        }
    }

    /// Whether a name is what Core Data accepts for entities and properties: letters, digits and
    /// underscores, not starting with a digit, at most 255 characters.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 255,
              first.properties.isAlphabetic || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// A name quoted for a message, control characters escaped.
    static func quoted(_ name: String) -> String {
        "'" + name.unicodeScalars.prefix(40).map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined()
            + (name.unicodeScalars.count > 40 ? "…" : "") + "'"
    }

    /// The entity with this name.
    public func entity(named name: String) -> EntityDescription? {
        indexByName[name].map { entities[$0] }
    }

    /// The direct sub-entities of an entity, sorted by name.
    public func subentities(of name: String) -> [String] {
        childrenByName[name] ?? []
    }

    /// The entity and all its descendants, depth-first in Core Data's order (each level sorted by name).
    public func hierarchy(from name: String) -> [String] {
        [name] + subentities(of: name).flatMap { hierarchy(from: $0) }
    }

    /// The entity's ancestors, nearest first.
    public func ancestors(of name: String) -> [String] {
        var chain: [String] = []
        var current = entity(named: name)?.superentityName
        while let parent = current {
            chain.append(parent)
            current = entity(named: parent)?.superentityName
        }
        return chain
    }

    /// The root entity of the hierarchy: the one whose table holds this entity's rows.
    public func rootEntityName(of name: String) -> String {
        ancestors(of: name).last ?? name
    }

    /// Whether `name` is `ancestor` or one of its descendants.
    public func isKind(_ name: String, of ancestor: String) -> Bool {
        name == ancestor || ancestors(of: name).contains(ancestor)
    }

    /// All attributes of an entity, inherited ones first (root first), each level sorted by name.
    public func allAttributes(of name: String) -> [AttributeDescription] {
        (ancestors(of: name).reversed() + [name]).flatMap { entity(named: $0)?.attributes ?? [] }
    }

    /// All relationships of an entity, inherited ones first (root first), each level sorted by name.
    public func allRelationships(of name: String) -> [RelationshipDescription] {
        (ancestors(of: name).reversed() + [name]).flatMap { entity(named: $0)?.relationships ?? [] }
    }

    /// The attribute `property` of an entity, inherited or its own.
    public func attribute(_ property: String, of name: String) -> AttributeDescription? {
        allAttributes(of: name).first { $0.name == property }
    }

    /// The relationship `property` of an entity, inherited or its own.
    public func relationship(_ property: String, of name: String) -> RelationshipDescription? {
        allRelationships(of: name).first { $0.name == property }
    }

    /// The entity that declares a property an entity has (itself or the nearest ancestor declaring it).
    public func declaringEntity(of property: String, from name: String) -> String {
        for owner in [name] + ancestors(of: name) {
            guard let entity = entity(named: owner) else { break }
            if entity.relationships.contains(where: { $0.name == property }) || entity.attributes.contains(where: { $0.name == property }) {
                return owner
            }
        }
        return name
    }

    /// The inverse of a relationship, if the model declares one.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverseName = relationship.inverseName else { return nil }
        return self.relationship(inverseName, of: relationship.destinationEntityName)
    }

    /// Entity numbers (`Z_ENT`) as Core Data assigns them: root entities sorted by name, each followed
    /// depth-first by its sub-entities.
    public var entityNumbers: [String: Int] {
        var numbers: [String: Int] = [:]
        for root in entities where root.superentityName == nil {
            for name in hierarchy(from: root.name) { numbers[name] = numbers.count + 1 }
        }
        return numbers
    }

    /// Whether any property of the model is marked "Index in Spotlight".
    public var marksSpotlightProperties: Bool {
        entities.contains { entity in
            entity.attributes.contains(where: \.isIndexedBySpotlight) || entity.relationships.contains(where: \.isIndexedBySpotlight)
        }
    }
}
