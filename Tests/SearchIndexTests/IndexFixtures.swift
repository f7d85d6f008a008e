import Foundation

@testable import SearchIndex
import TestScratch

enum IndexFixtures {
    static func temporaryDirectory() -> URL {
        let url = Scratch.folder.appendingPathComponent("searchindex-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func checkpoint(_ token: Int64, store: String = "STORE-A") -> StoreCheckpoint {
        StoreCheckpoint(storeUUID: store, storePath: "/tmp/\(store).sqlite", token: token)
    }

    static func item(_ key: Int, _ name: String, text: [String] = [], latitude: Double? = nil, longitude: Double? = nil,
                     entity: String = "Place", rank: Double = 0, store: String = "STORE-A") -> IndexedItem {
        IndexedItem(uri: "x-coredata://\(store)/\(entity)/p\(key)", entity: entity, displayName: name, title: name, text: text,
                    latitude: latitude, longitude: longitude, rank: rank)
    }
}
