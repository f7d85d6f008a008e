import Foundation

/// What `Z_METADATA` says about a store: its UUID and the model it was written with.
public struct StoreMetadata: Sendable, Hashable {
    /// The store UUID: the host part of every object-ID URI.
    public var storeUUID: String
    /// `NSStoreType` ("SQLite").
    public var storeType: String?
    /// `NSPersistenceFrameworkVersion` of the Core Data that last wrote the metadata.
    public var frameworkVersion: Int64?
    /// `NSStoreModelVersionHashes`: entity name → 32-byte version hash.
    public var versionHashes: [String: Data]
    /// `NSStoreModelVersionHashesDigest` (base64 SHA-512), if present.
    public var versionHashesDigest: String?
    /// `NSStoreModelVersionChecksumKey` (base64 SHA-256), newer stores only.
    public var versionChecksum: String?
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// The whole metadata dictionary, for keys this type does not name.
    package var plist: [String: PropertyListValue]

    /// Decodes the `Z_PLIST` blob of the metadata row.
    public init(storeUUID: String, plist data: Data?) throws(CoreDataStoreError) {
        self.storeUUID = storeUUID
        var dictionary: [String: PropertyListValue] = [:]
        if let data, !data.isEmpty {
            do {
                dictionary = try BinaryPropertyList.decode(data).dictionaryValue ?? [:]
            } catch {
                throw .invalidModel(reason: "Z_METADATA.Z_PLIST cannot be decoded (\(error))")
            }
        }
        plist = dictionary
        storeType = dictionary["NSStoreType"]?.stringValue
        frameworkVersion = dictionary["NSPersistenceFrameworkVersion"]?.integerValue
        versionHashes = (dictionary["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:]).compactMapValues(\.dataValue)
        versionHashesDigest = dictionary["NSStoreModelVersionHashesDigest"]?.stringValue
        versionChecksum = dictionary["NSStoreModelVersionChecksumKey"]?.stringValue
        versionIdentifiers = (dictionary["NSStoreModelVersionIdentifiers"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// The digest Core Data computes over the version hashes: SHA-512 of each entity name (sorted)
    /// followed by its hash, base64-encoded. Changes exactly when the model changes.
    public static func digest(of hashes: [String: Data]) -> String {
        var input = Data()
        for name in hashes.keys.sorted() {
            input.append(contentsOf: Array(name.utf8))
            input.append(hashes[name] ?? Data())
        }
        return Data(SHA2.sha512(input)).base64EncodedString()
    }

    /// The checksum newer Core Data writes: SHA-256 over the hashes in entity-name order, base64-encoded.
    public static func checksum(of hashes: [String: Data]) -> String {
        var input = Data()
        for name in hashes.keys.sorted() { input.append(hashes[name] ?? Data()) }
        return Data(SHA2.sha256(input)).base64EncodedString()
    }

    /// The model digest: the stored one, or computed from the hashes when the store lacks it.
    public var modelDigest: String { versionHashesDigest ?? Self.digest(of: versionHashes) }
}
