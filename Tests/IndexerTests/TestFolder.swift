import CoreDataStore
import CoreDataStoreWriter
import Foundation
import TestScratch

/// Fresh folders for tests, and the store most of them start from.
enum TestFolder {
    /// A new, empty folder under the temporary directory, named after the test.
    static func make(_ label: String) throws -> URL {
        let folder = Scratch.folder.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A new folder holding an empty `Atlas.sqlite` with history, written by the project's own writer
    /// with the expression tests' model (places, countries, continents).
    static func atlasStore(_ label: String) throws -> (folder: URL, path: String, writer: StoreWriter) {
        let folder = try make(label)
        let path = folder.appendingPathComponent("Atlas.sqlite").path
        return (folder, path, try StoreWriter.create(at: path, model: try ExpressionTests.model()))
    }
}
