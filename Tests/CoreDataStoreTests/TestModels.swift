import CoreDataStore
import Foundation

/// Models built in code for writer tests: every relationship kind Core Data has.
enum TestModels {
    /// Countries, places (with a sub-entity), tags (many-to-many), capitals (one-to-one) and
    /// playlists (ordered one-to-many), with a preserved-after-deletion attribute.
    static func atlas() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Country", attributes: [
                AttributeDescription(name: "code", type: .string, isOptional: false, isIndexedBySpotlight: true),
                AttributeDescription(name: "name", type: .string, isIndexedBySpotlight: true),
                AttributeDescription(name: "population", type: .integer64, defaultValue: "0"),
            ], relationships: [
                RelationshipDescription(name: "places", destinationEntityName: "Place", inverseName: "country", isToMany: true, deleteRule: .cascade),
                RelationshipDescription(name: "capital", destinationEntityName: "Place", inverseName: "capitalOf"),
            ], uniquenessConstraints: [["code"]]),
            EntityDescription(name: "Place", attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "latitude", type: .double),
                AttributeDescription(name: "longitude", type: .double),
                AttributeDescription(name: "population", type: .integer32),
                AttributeDescription(name: "updatedAt", type: .date),
                AttributeDescription(name: "identifier", type: .uuid, preservesValueInHistoryOnDeletion: true),
                AttributeDescription(name: "visited", type: .boolean, defaultValue: "NO"),
                AttributeDescription(name: "photo", type: .binaryData),
                AttributeDescription(name: "note", type: .string, isTransient: true),
            ], relationships: [
                RelationshipDescription(name: "country", destinationEntityName: "Country", inverseName: "places"),
                RelationshipDescription(name: "capitalOf", destinationEntityName: "Country", inverseName: "capital"),
                RelationshipDescription(name: "tags", destinationEntityName: "Tag", inverseName: "places", isToMany: true),
            ], fetchIndexes: [FetchIndexDescription(name: "byName", elements: [.init(propertyName: "name")])]),
            EntityDescription(name: "City", superentityName: "Place", attributes: [
                AttributeDescription(name: "isCapital", type: .boolean, defaultValue: "NO"),
            ]),
            EntityDescription(name: "Tag", attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
            ], relationships: [
                RelationshipDescription(name: "places", destinationEntityName: "Place", inverseName: "tags", isToMany: true),
            ]),
            EntityDescription(name: "Playlist", attributes: [
                AttributeDescription(name: "title", type: .string),
            ], relationships: [
                RelationshipDescription(name: "entries", destinationEntityName: "Entry", inverseName: "playlist", isToMany: true, isOrdered: true, deleteRule: .deny),
            ]),
            EntityDescription(name: "Entry", attributes: [
                AttributeDescription(name: "title", type: .string),
            ], relationships: [
                RelationshipDescription(name: "playlist", destinationEntityName: "Playlist", inverseName: "entries"),
            ]),
        ], versionIdentifiers: ["atlas-1"])
    }
}
