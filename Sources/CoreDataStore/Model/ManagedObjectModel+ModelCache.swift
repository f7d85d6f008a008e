import Foundation

extension ManagedObjectModel {
    /// The largest inflated `Z_MODELCACHE` decoded: 16 MiB, 58× the largest real one seen (Photos, 285 KB).
    public static let maximumModelCacheSize = 16 << 20

    /// Decodes the model a store carries in `Z_MODELCACHE.Z_CONTENT`: raw DEFLATE around an
    /// `NSKeyedArchiver` archive whose root is the `NSManagedObjectModel`.
    public init(modelCache content: Data) throws(CoreDataStoreError) {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: try RawDeflate.inflate(content, limit: Self.maximumModelCacheSize))
        } catch {
            throw .invalidModel(reason: "Z_MODELCACHE cannot be decoded (\(error))")
        }
        guard let root = archive.root, archive.className(of: root) == "NSManagedObjectModel" else {
            throw .invalidModel(reason: "Z_MODELCACHE does not hold an NSManagedObjectModel")
        }
        let decoded = archive.dictionary(root, "NSEntities").map { entry in
            Self.decodeEntity(entry.value, archive: archive)
        }
        // Apple's archive repeats inherited properties on every sub-entity (with NSEntity pointing at the
        // sub-entity): an entity's own properties are those its parent does not also list.
        let byName = Dictionary(decoded.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let entities = decoded.map { entity in
            guard let parent = entity.superentityName.flatMap({ byName[$0] }) else { return entity }
            var own = entity
            let inheritedAttributes = Set(parent.attributes.map(\.name))
            let inheritedRelationships = Set(parent.relationships.map(\.name))
            let inheritedFetched = Set(parent.fetchedPropertyNames)
            own.attributes.removeAll { inheritedAttributes.contains($0.name) }
            own.relationships.removeAll { inheritedRelationships.contains($0.name) }
            own.fetchedPropertyNames.removeAll { inheritedFetched.contains($0) }
            return own
        }
        let identifiers = archive.array(root, "NSVersionIdentifiers").compactMap(\.stringValue)
        try self.init(entities: Self.droppingInheritedConstraints(entities), versionIdentifiers: identifiers, source: .modelCache)
        fetchRequestTemplates = Self.fetchRequestTemplates(in: archive, model: root)
    }

    private static func decodeEntity(_ entity: PropertyListValue, archive: KeyedArchive) -> EntityDescription {
        let name = archive.string(entity, "NSEntityName") ?? ""
        let parent = archive.string(archive.resolve(entity["NSSuperentity"]), "NSEntityName")
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        var fetched: [String] = []
        for (propertyName, property) in archive.dictionary(entity, "NSProperties") {
            switch archive.className(of: property) {
            case "NSRelationshipDescription":
                relationships.append(decodeRelationship(property, name: propertyName, archive: archive))
            case "NSFetchedPropertyDescription":
                fetched.append(propertyName)
            case let className? where className.hasSuffix("AttributeDescription"):
                attributes.append(decodeAttribute(property, name: propertyName, className: className, archive: archive))
            default:
                continue // expression descriptions and unknown kinds have no column
            }
        }
        let fetchIndexes = archive.array(entity, "NSFetchIndexDescriptions").compactMap { index -> FetchIndexDescription? in
            let owner = archive.string(archive.resolve(index["NSEntity"]), "NSEntityName")
            guard owner == nil || owner == name, let indexName = archive.string(index, "NSIndexName") else { return nil }
            let elements = archive.array(index, "NSIndexElements").compactMap { element -> FetchIndexDescription.Element? in
                guard let property = archive.string(element, "NSPropertyName")
                        ?? archive.string(archive.resolve(element["NSProperty"]), "NSPropertyName")
                else { return nil }
                return FetchIndexDescription.Element(
                    propertyName: property,
                    isRTree: element["NSFetchIndexElementType"]?.integerValue == 1,
                    isAscending: element["NSAscending"]?.boolValue ?? true)
            }
            return FetchIndexDescription(name: indexName, elements: elements)
        }
        let uniqueness = archive.array(entity, "NSUniqueTuples").map { tuple in
            archive.elements(of: tuple).compactMap { $0.stringValue ?? archive.string($0, "NSPropertyName") }
        }
        let renaming = archive.string(entity, "NSRenamingIdentifier")
        return EntityDescription(
            name: name, superentityName: parent, isAbstract: entity["NSIsAbstract"]?.boolValue ?? false,
            attributes: attributes, relationships: relationships, fetchedPropertyNames: fetched,
            fetchIndexes: fetchIndexes, uniquenessConstraints: uniqueness,
            renamingIdentifier: renaming == name ? nil : renaming,
            userInfo: userInfo(entity, archive: archive))
    }

    /// The bit of an attribute's `NSFlagsKey` that marks it "Preserve after deletion".
    static let preserveAfterDeletionFlag: Int64 = 0x10

    private static func decodeAttribute(
        _ property: PropertyListValue, name: String, className: String, archive: KeyedArchive
    ) -> AttributeDescription {
        let code = Int(property["NSAttributeType"]?.integerValue ?? 0)
        let renaming = archive.string(property, "NSRenamingIdentifier")
        let defaultValue: String? = switch archive.resolve(property["NSDefaultValue"]) {
        case .string(let text)?: text
        case .integer(let number)?: String(number)
        case .real(let number)?: String(number)
        case .bool(let flag)?: flag ? "YES" : "NO"
        default: nil // archived objects (transformable defaults) have no textual form
        }
        return AttributeDescription(
            name: name,
            type: AttributeType(rawValue: code) ?? .undefined,
            isOptional: property["NSIsOptional"]?.boolValue ?? false,
            isTransient: property["NSIsTransient"]?.boolValue ?? false,
            isDerived: className == "NSDerivedAttributeDescription",
            defaultValue: defaultValue,
            valueTransformerName: archive.string(property, "NSValueTransformerName"),
            // "Index in Spotlight" has no confirmed archive key (no Apple-written store here sets it); the
            // writer's own key is read back. "Preserve after deletion" is bit 0x10 of NSFlagsKey, as the
            // real stores show: exactly those attributes fill ZTOMBSTONE<n> (1,378 of 1,378 values).
            isIndexedBySpotlight: property["NSIsIndexedBySpotlight"]?.boolValue ?? false,
            preservesValueInHistoryOnDeletion: (property["NSFlagsKey"]?.integerValue ?? 0) & Self.preserveAfterDeletionFlag != 0
                || property["NSPreservesValueInHistoryOnDeletion"]?.boolValue ?? false,
            allowsExternalBinaryDataStorage: property["NSAllowsExternalBinaryDataStorage"]?.boolValue ?? false,
            renamingIdentifier: renaming == name ? nil : renaming,
            userInfo: userInfo(property, archive: archive))
    }

    private static func decodeRelationship(_ property: PropertyListValue, name: String, archive: KeyedArchive) -> RelationshipDescription {
        let destination = archive.string(archive.resolve(property["NSDestinationEntity"]), "NSEntityName")
            ?? archive.string(property, "_NSDestinationEntityName") ?? ""
        let inverse = archive.string(archive.resolve(property["NSInverseRelationship"]), "NSPropertyName")
            ?? archive.string(property, "_NSInverseRelationshipName")
        let maxCount = Int(property["NSMaxCount"]?.integerValue ?? 1)
        let renaming = archive.string(property, "NSRenamingIdentifier")
        return RelationshipDescription(
            name: name, destinationEntityName: destination, inverseName: inverse,
            isToMany: maxCount != 1, isOrdered: property["NSIsOrdered"]?.boolValue ?? false,
            isOptional: property["NSIsOptional"]?.boolValue ?? false,
            isTransient: property["NSIsTransient"]?.boolValue ?? false,
            minCount: Int(property["NSMinCount"]?.integerValue ?? 0), maxCount: max(0, maxCount),
            deleteRule: RelationshipDescription.DeleteRule(rawValue: Int(property["NSDeleteRule"]?.integerValue ?? 1)) ?? .nullify,
            isIndexedBySpotlight: property["NSIsIndexedBySpotlight"]?.boolValue ?? false,
            renamingIdentifier: renaming == name ? nil : renaming,
            userInfo: userInfo(property, archive: archive))
    }

    private static func userInfo(_ object: PropertyListValue, archive: KeyedArchive) -> [String: String] {
        var info: [String: String] = [:]
        for (key, value) in archive.dictionary(object, "NSUserInfo") {
            info[key] = value.stringValue ?? value.integerValue.map(String.init) ?? value.doubleValue.map { String($0) }
        }
        return info
    }

    /// Sub-entities may repeat their parent's uniqueness constraints; keep each on the entity that declares it.
    static func droppingInheritedConstraints(_ entities: [EntityDescription]) -> [EntityDescription] {
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return entities.map { entity in
            var entity = entity
            var inherited: Set<[String]> = []
            var parent = entity.superentityName
            var guardCount = 0
            while let name = parent, let ancestor = byName[name], guardCount < byName.count {
                inherited.formUnion(ancestor.uniquenessConstraints)
                parent = ancestor.superentityName
                guardCount += 1
            }
            entity.uniquenessConstraints.removeAll { inherited.contains($0) }
            return entity
        }
    }
}
