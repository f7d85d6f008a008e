import CoreDataStore
import Foundation
import TestScratch

/// Locates `../shared/fixtures` beside the project root and hands out scratch copies.
enum Fixtures {
    static let projectRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sharedFixtures = projectRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let stores = sharedFixtures.appendingPathComponent("coredata-stores")
    static let models = sharedFixtures.appendingPathComponent("models")

    /// Whether the Apple-written fixtures are present (a user's fresh clone has no `../shared`).
    static let available = FileManager.default.fileExists(atPath: stores.appendingPathComponent("SampleModel2_V1.sqlite").path)
    static let skipMessage = "../shared/fixtures is absent: the Apple-written stores and models are not available"

    static let storeNames = ["SampleModel2_V1", "SampleModel2_V2", "SampleModel_V1", "SampleModel_V2", "SampleModel3_V1"]

    /// A fresh temporary directory, removed by the caller's `defer`.
    static func temporaryDirectory() -> URL {
        let url = Scratch.folder.appendingPathComponent("searchlight-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Copies a fixture store (and any -wal/-shm companions) into `directory`; never touch the originals.
    static func copyStore(_ name: String, to directory: URL) throws -> String {
        let manager = FileManager.default
        // A folder per copy: a test may copy the same fixture more than once.
        let folder = directory.appendingPathComponent(UUID().uuidString)
        try manager.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appendingPathComponent("\(name).sqlite")
        for suffix in ["", "-wal", "-shm"] {
            let source = stores.appendingPathComponent("\(name).sqlite\(suffix)")
            guard manager.fileExists(atPath: source.path) else { continue }
            let target = URL(fileURLWithPath: destination.path + suffix)
            try manager.copyItem(at: source, to: target)
            try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        }
        return destination.path
    }
}
