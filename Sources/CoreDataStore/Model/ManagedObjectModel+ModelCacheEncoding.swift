import Foundation

extension ManagedObjectModel {
    /// The model as `Z_MODELCACHE.Z_CONTENT`: an `NSKeyedArchiver` archive in Core Data's shape
    /// (entities with their properties, inherited ones repeated on sub-entities as Apple does),
    /// compressed with raw DEFLATE. ``init(modelCache:)`` reads it back to an equal model.
    public func modelCacheContent() -> Data {
        var archive = KeyedArchiveBuilder()
        let root = archive.reserve()
        var entitySlots: [String: PropertyListValue] = [:]
        for entity in entities { entitySlots[entity.name] = archive.reserve() }
        // Every (entity, property) pair gets its own object, like Apple's archive; inverses point at
        // the copy on the declaring destination entity.
        var propertySlots: [String: [String: PropertyListValue]] = [:]
        for entity in entities {
            for attribute in allAttributes(of: entity.name) { propertySlots[entity.name, default: [:]][attribute.name] = archive.reserve() }
            for relationship in allRelationships(of: entity.name) { propertySlots[entity.name, default: [:]][relationship.name] = archive.reserve() }
        }
        let null = PropertyListValue.uid(0)
        let propertyClass = ["NSPropertyDescription", "NSObject"]
        for entity in entities {
            guard let entitySlot = entitySlots[entity.name] else { continue }
            var properties: [(String, PropertyListValue)] = []
            for attribute in allAttributes(of: entity.name) {
                guard let slot = propertySlots[entity.name]?[attribute.name] else { continue }
                let className = attribute.isDerived ? ["NSDerivedAttributeDescription", "NSAttributeDescription"] : ["NSAttributeDescription"]
                archive.fill(slot, className: className + propertyClass, fields: [
                    "NSPropertyName": archive.add(string: attribute.name),
                    "NSEntity": entitySlot,
                    "NSAttributeType": .integer(Int64(attribute.type.rawValue)),
                    "NSIsOptional": .bool(attribute.isOptional),
                    "NSIsTransient": .bool(attribute.isTransient),
                    "NSDefaultValue": attribute.defaultValue.map { archive.add(string: $0) } ?? null,
                    "NSValueTransformerName": attribute.valueTransformerName.map { archive.add(string: $0) } ?? null,
                    "NSRenamingIdentifier": archive.add(string: attribute.renamingIdentifier ?? attribute.name),
                    "NSIsIndexedBySpotlight": .bool(attribute.isIndexedBySpotlight),
                    "NSPreservesValueInHistoryOnDeletion": .bool(attribute.preservesValueInHistoryOnDeletion),
                    // Where Apple's archives keep the flag (bit 0x10), so Core Data reads the stores we write alike.
                    "NSFlagsKey": .integer(attribute.preservesValueInHistoryOnDeletion ? ManagedObjectModel.preserveAfterDeletionFlag : 0),
                    "NSAllowsExternalBinaryDataStorage": .bool(attribute.allowsExternalBinaryDataStorage),
                    "NSUserInfo": encodeUserInfo(attribute.userInfo, into: &archive),
                ])
                properties.append((attribute.name, slot))
            }
            for relationship in allRelationships(of: entity.name) {
                guard let slot = propertySlots[entity.name]?[relationship.name] else { continue }
                let destination = relationship.destinationEntityName
                let inverseSlot = relationship.inverseName.flatMap { propertySlots[destination]?[$0] } ?? null
                archive.fill(slot, className: ["NSRelationshipDescription"] + propertyClass, fields: [
                    "NSPropertyName": archive.add(string: relationship.name),
                    "NSEntity": entitySlot,
                    "NSDestinationEntity": entitySlots[destination] ?? null,
                    "_NSDestinationEntityName": archive.add(string: destination),
                    "NSInverseRelationship": inverseSlot,
                    "_NSInverseRelationshipName": relationship.inverseName.map { archive.add(string: $0) } ?? null,
                    "NSMinCount": .integer(Int64(relationship.minCount)),
                    "NSMaxCount": .integer(Int64(relationship.isToMany ? relationship.maxCount : 1)),
                    "NSDeleteRule": .integer(Int64(relationship.deleteRule.rawValue)),
                    "NSIsOptional": .bool(relationship.isOptional),
                    "NSIsTransient": .bool(relationship.isTransient),
                    "NSIsOrdered": .bool(relationship.isOrdered),
                    "NSIsIndexedBySpotlight": .bool(relationship.isIndexedBySpotlight),
                    "NSRenamingIdentifier": archive.add(string: relationship.renamingIdentifier ?? relationship.name),
                    "NSUserInfo": encodeUserInfo(relationship.userInfo, into: &archive),
                ])
                properties.append((relationship.name, slot))
            }
            // Fetched properties are queries with no column; their names are kept so the model reads back whole.
            for ancestor in (ancestors(of: entity.name).reversed() + [entity.name]) {
                for name in self.entity(named: ancestor)?.fetchedPropertyNames ?? [] {
                    properties.append((name, archive.add(className: ["NSFetchedPropertyDescription"] + propertyClass, fields: [
                        "NSPropertyName": archive.add(string: name),
                        "NSEntity": entitySlot,
                        "NSIsOptional": .bool(true),
                        "NSIsTransient": .bool(true),
                    ])))
                }
            }
            let subentities = subentities(of: entity.name).compactMap { name in entitySlots[name].map { (name, $0) } }
            let fetchIndexes = entity.fetchIndexes.map { index in
                let indexSlot = archive.reserve()
                let elements = index.elements.map { element in
                    archive.add(className: ["NSFetchIndexElementDescription", "NSObject"], fields: [
                        "NSPropertyName": archive.add(string: element.propertyName),
                        "NSFetchIndexElementType": .integer(element.isRTree ? 1 : 0),
                        "NSAscending": .bool(element.isAscending),
                        "NSFetchIndexDescription": indexSlot,
                    ])
                }
                archive.fill(indexSlot, className: ["NSFetchIndexDescription", "NSObject"], fields: [
                    "NSIndexName": archive.add(string: index.name),
                    "NSIndexElements": archive.add(array: elements),
                    "NSEntity": entitySlot,
                ])
                return indexSlot
            }
            let uniqueTuples = entity.uniquenessConstraints.map { tuple in
                archive.add(array: tuple.map { archive.add(string: $0) })
            }
            archive.fill(entitySlot, className: ["NSEntityDescription", "NSObject"], fields: [
                "NSEntityName": archive.add(string: entity.name),
                "NSClassNameForEntity": archive.add(string: entity.name),
                "NSSuperentity": entity.superentityName.flatMap { entitySlots[$0] } ?? null,
                "NSSubentities": archive.add(dictionary: subentities),
                "NSProperties": archive.add(dictionary: properties),
                "NSIsAbstract": .bool(entity.isAbstract),
                "NSManagedObjectModel": root,
                "NSRenamingIdentifier": archive.add(string: entity.renamingIdentifier ?? entity.name),
                "NSUserInfo": encodeUserInfo(entity.userInfo, into: &archive),
                "NSFetchIndexDescriptions": archive.add(array: fetchIndexes),
                "NSUniqueTuples": archive.add(array: uniqueTuples),
            ])
        }
        archive.fill(root, className: ["NSManagedObjectModel", "NSObject"], fields: [
            "NSEntities": archive.add(dictionary: entities.compactMap { entity in entitySlots[entity.name].map { (entity.name, $0) } }),
            "NSVersionIdentifiers": archive.add(array: versionIdentifiers.map { archive.add(string: $0) }, className: "NSSet"),
            "NSFetchRequestTemplates": null,
        ])
        return RawDeflate.deflate(archive.encoded(root: root))
    }

    private func encodeUserInfo(_ info: [String: String], into archive: inout KeyedArchiveBuilder) -> PropertyListValue {
        let entries = info.sorted { $0.key < $1.key }.map { ($0.key, archive.add(string: $0.value)) }
        return archive.add(dictionary: entries)
    }

    /// Per-entity version hashes for a store Searchlight writes: SHA-256 of a canonical description
    /// of what the entity stores. Apple's own algorithm is undocumented, so these hashes are only ever
    /// compared with each other (equal model ⇔ equal hashes), never with Apple's.
    public var versionHashes: [String: Data] {
        var hashes: [String: Data] = [:]
        for entity in entities {
            var text = "entity \(entity.name) parent \(entity.superentityName ?? "-") abstract \(entity.isAbstract)\n"
            for attribute in allAttributes(of: entity.name) {
                text += "attribute \(attribute.name) \(attribute.type.rawValue) optional \(attribute.isOptional) transient \(attribute.isTransient)\n"
            }
            for relationship in allRelationships(of: entity.name) {
                text += "relationship \(relationship.name) \(relationship.destinationEntityName) toMany \(relationship.isToMany) ordered \(relationship.isOrdered) inverse \(relationship.inverseName ?? "-")\n"
            }
            hashes[entity.name] = Data(SHA2.sha256(Data(text.utf8)))
        }
        return hashes
    }

    /// The `Z_METADATA.Z_PLIST` dictionary for a new store of this model.
    public func storeMetadataPlist() -> Data {
        let hashes = versionHashes
        return BinaryPropertyList.encode(.dictionary([
            "NSStoreType": .string("SQLite"),
            "NSPersistenceFrameworkVersion": .integer(1344),
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSStoreModelVersionHashes": .dictionary(hashes.mapValues(PropertyListValue.data)),
            "NSStoreModelVersionHashesDigest": .string(StoreMetadata.digest(of: hashes)),
            "NSStoreModelVersionChecksumKey": .string(StoreMetadata.checksum(of: hashes)),
            "NSStoreModelVersionIdentifiers": .array(versionIdentifiers.map(PropertyListValue.string)),
            "_NSAutoVacuumLevel": .string("2"),
            "SearchlightWriter": .integer(1),
        ]))
    }
}
