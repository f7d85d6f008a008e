/// One attribute of an entity, as the model declares it.
public struct AttributeDescription: Sendable, Hashable {
    /// The property name.
    public var name: String
    /// The value type.
    public var type: AttributeType
    /// Whether the attribute may be nil.
    public var isOptional: Bool
    /// Whether the attribute lives only in memory (no column).
    public var isTransient: Bool
    /// Whether Core Data computes the value (a derived attribute, kept by triggers).
    public var isDerived: Bool
    /// The derivation expression, when the source says it.
    public var derivationExpression: String?
    /// The default value as the model spells it, if any.
    public var defaultValue: String?
    /// The value transformer of a transformable attribute.
    public var valueTransformerName: String?
    /// Whether the model marks the attribute "Index in Spotlight".
    public var isIndexedBySpotlight: Bool
    /// Whether the attribute's last value is kept in history tombstones when its object is deleted.
    public var preservesValueInHistoryOnDeletion: Bool
    /// Whether binary data may live outside the store ("Allows External Storage").
    public var allowsExternalBinaryDataStorage: Bool
    /// The previous name, for migrations (`elementID` / renaming identifier).
    public var renamingIdentifier: String?
    /// Elements of a composite attribute, flattened into columns of their own.
    public var compositeElements: [AttributeDescription]
    /// The model's user info entries.
    public var userInfo: [String: String]

    /// Creates an attribute; every flag not given takes Core Data's default.
    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        isDerived: Bool = false, derivationExpression: String? = nil, defaultValue: String? = nil,
        valueTransformerName: String? = nil, isIndexedBySpotlight: Bool = false,
        preservesValueInHistoryOnDeletion: Bool = false, allowsExternalBinaryDataStorage: Bool = false,
        renamingIdentifier: String? = nil, compositeElements: [AttributeDescription] = [],
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isDerived = isDerived
        self.derivationExpression = derivationExpression
        self.defaultValue = defaultValue
        self.valueTransformerName = valueTransformerName
        self.isIndexedBySpotlight = isIndexedBySpotlight
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.renamingIdentifier = renamingIdentifier
        self.compositeElements = compositeElements
        self.userInfo = userInfo
    }

    /// Whether the attribute has a column in the entity table.
    public var isStored: Bool { !isTransient && (type.columnType != nil || type == .composite) }
}
