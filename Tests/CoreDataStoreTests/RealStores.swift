@testable import CoreDataStore
import Foundation
import Testing

/// One store from `../shared/fixtures/real-stores`: written by Apple's framework, taken unchanged from a
/// public repository's test data.
struct RealStore: Sendable, CustomTestStringConvertible {
    /// The fixture's folder.
    var folder: String
    /// The store file inside it.
    var file: String
    /// A model file the folder ships, relative to it (for stores without `Z_MODELCACHE`).
    var modelFile: String?
    /// Whether the store records persistent history.
    var hasHistory: Bool

    var testDescription: String { folder }
}

extension Fixtures {
    static let realStores = sharedFixtures.appendingPathComponent("real-stores")
    static let realStoresAvailable = FileManager.default.fileExists(
        atPath: realStores.appendingPathComponent("openhouse__osxphotos__Photos-10.15.7/Photos.sqlite").path)
    static let realStoresSkipMessage = "../shared/fixtures/real-stores is absent: the real Apple-written stores are not available"

    static let realStoreList: [RealStore] = [
        RealStore(folder: "openhouse__osxphotos__Photos-10.15.7", file: "Photos.sqlite", hasHistory: true),
        RealStore(folder: "log2timeline__plaso__macos_knowledgec-10.13", file: "knowledgec-10.13.db", hasHistory: true),
        RealStore(folder: "log2timeline__plaso__ios_RMAdminStore-Local", file: "RMAdminStore-Local.sqlite", hasHistory: true),
        RealStore(folder: "wibosco__CoreDataMigration-Example__Example_WAL", file: "CoreDataMigration_Example_WAL.sqlite", hasHistory: false),
        RealStore(folder: "frollous__frollo-swift-sdk__FrolloSDKDataModel-1.7.2", file: "FrolloSDKDataModel-1.7.2.sqlite", hasHistory: false),
        RealStore(folder: "billtkh__KeasyBoard__Simplex", file: "Simplex.sqlite", hasHistory: false),
        RealStore(folder: "kodecocodes__cdt-materials__SurfJournalModel", file: "SurfJournalModel.sqlite",
                  modelFile: "SurfJournalModel.xcdatamodeld", hasHistory: false),
        RealStore(folder: "Karim-ezzedine__CartKit__CartKitSwiftData_v1", file: "CartKitSwiftData_v1.sqlite", hasHistory: true),
    ]

    /// Copies a real store's folder (store, companions, shipped model) into `directory`, writable.
    static func copyRealStore(_ store: RealStore, to directory: URL) throws -> URL {
        let manager = FileManager.default
        let folder = directory.appendingPathComponent(UUID().uuidString)
        try manager.copyItem(at: realStores.appendingPathComponent(store.folder), to: folder)
        if let files = manager.enumerator(atPath: folder.path) {
            for case let name as String in files {
                try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.appendingPathComponent(name).path)
            }
        }
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        return folder
    }

    /// SHA-256 of every file in a folder (store, `-wal`, `-shm`), to prove a reader wrote nothing.
    static func fingerprint(of folder: URL) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            var isDirectory: ObjCBool = false
            let path = folder.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            result[name] = SHA2.sha256(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        return result
    }
}
