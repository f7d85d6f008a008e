/// One entity of a model: its own (not inherited) properties and its place in the hierarchy.
public struct EntityDescription: Sendable, Hashable {
    /// The entity name: the second path component of its object-ID URIs.
    public var name: String
    /// The parent entity's name, if any.
    public var superentityName: String?
    /// Whether the entity has no instances of its own (only sub-entities do).
    public var isAbstract: Bool
    /// Attributes declared on this entity, sorted by name (inherited ones live on the parent).
    public var attributes: [AttributeDescription]
    /// Relationships declared on this entity, sorted by name.
    public var relationships: [RelationshipDescription]
    /// Names of fetched properties (queries, never stored).
    public var fetchedPropertyNames: [String]
    /// Fetch indexes (`<fetchIndex>`), in model order.
    public var fetchIndexes: [FetchIndexDescription]
    /// Uniqueness constraints: each a list of property names.
    public var uniquenessConstraints: [[String]]
    /// The previous name, for migrations (`elementID` / renaming identifier).
    public var renamingIdentifier: String?
    /// The model's user info entries.
    public var userInfo: [String: String]

    /// Creates an entity.
    public init(
        name: String, superentityName: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        fetchedPropertyNames: [String] = [], fetchIndexes: [FetchIndexDescription] = [],
        uniquenessConstraints: [[String]] = [], renamingIdentifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.superentityName = superentityName
        self.isAbstract = isAbstract
        self.attributes = attributes.sorted { $0.name < $1.name }
        self.relationships = relationships.sorted { $0.name < $1.name }
        self.fetchedPropertyNames = fetchedPropertyNames.sorted()
        self.fetchIndexes = fetchIndexes
        self.uniquenessConstraints = uniquenessConstraints
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }
}

/// A fetch index: an SQL index (or R-tree) Core Data keeps over some properties.
public struct FetchIndexDescription: Sendable, Hashable {
    /// One indexed property.
    public struct Element: Sendable, Hashable {
        /// The indexed property's name.
        public var propertyName: String
        /// Whether this element is part of an R-tree index rather than a B-tree one.
        public var isRTree: Bool
        /// Whether the index sorts ascending.
        public var isAscending: Bool

        /// Creates an element.
        public init(propertyName: String, isRTree: Bool = false, isAscending: Bool = true) {
            self.propertyName = propertyName
            self.isRTree = isRTree
            self.isAscending = isAscending
        }
    }

    /// The index name.
    public var name: String
    /// The indexed properties, in order.
    public var elements: [Element]

    /// Creates a fetch index.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
