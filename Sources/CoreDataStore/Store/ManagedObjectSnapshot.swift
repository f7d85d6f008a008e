/// The saved state of one object: its attributes and relationships as stored.
public struct ManagedObjectSnapshot: Sendable, Hashable {
    /// The object's identity.
    public var objectID: ManagedObjectID
    /// The optimistic-locking version (`Z_OPT`): 1 after insert, +1 per saved update.
    public var version: Int64
    /// Stored attribute values by name (`.null` for nil). Composite attributes appear as
    /// `attribute.element` keys, one per element.
    public var attributes: NamedValues<AttributeValue>
    /// To-one relationships by name; absent when nil.
    public var toOne: NamedValues<ManagedObjectID>
    /// To-many relationships by name (ordered ones in their order, others by primary key).
    /// Present only for relationships that were fetched.
    public var toMany: [String: [ManagedObjectID]]

    /// The entity name.
    public var entityName: String { objectID.entityName }

    /// Creates a snapshot.
    public init(objectID: ManagedObjectID, version: Int64, attributes: NamedValues<AttributeValue> = [:],
                toOne: NamedValues<ManagedObjectID> = [:], toMany: [String: [ManagedObjectID]] = [:]) {
        self.objectID = objectID
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }
}

/// Which relationships a fetch resolves.
public enum RelationshipSelection: Sendable, Hashable {
    /// Every relationship, to-one and to-many.
    case all
    /// To-one relationships only (they come with the row, no extra query).
    case toOneOnly
    /// To-one relationships and the named to-many ones.
    case toOneAnd(Set<String>)

    func includesToMany(_ name: String) -> Bool {
        switch self {
        case .all: true
        case .toOneOnly: false
        case .toOneAnd(let names): names.contains(name)
        }
    }
}
