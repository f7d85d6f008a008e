import CoreDataStore
import Foundation
import Indexer
import SearchIndex
import Testing

/// The README's library example, as written there, on a copy of an Apple-written store.
@Suite("The README's library example")
struct LibraryExampleTests {
    @Test("zero-config export, a search, the hits resolved back to objects, a typo and a suggestion", .enabled(if: ExporterTests.fixtures, "../shared/fixtures is absent"))
    func example() throws {
        let directory = try TestFolder.make("library")
        let path = directory.appendingPathComponent("App.sqlite").path
        try FileManager.default.copyItem(atPath: ExporterTests.shared.appendingPathComponent("SampleModel2_V1.sqlite").path, toPath: path)

        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: directory.appendingPathComponent("App.searchindex").path, mode: .readWrite(permissions: 0o600))
        let configuration = try ResolvedConfiguration(nil, model: store.model)
        let exporter = try Exporter(store: store, index: index, configuration: configuration)
        let summary = try exporter.catchUp()
        let hits = try index.search(SearchRequest(query: "title 13")).hits
        let objects = try DeepLinkResolver(index: index).resolve(hits.map(\.uri))
        var typed = SearchRequest(query: "titel 13")
        typed.typoTolerance = false
        let suggestion = try index.search(typed).suggestion?.query

        #expect(try index.search(SearchRequest(query: "titel 13")).hits.first?.uri == hits.first?.uri)
        #expect(suggestion == "title 13")

        #expect(summary.inserted == 5_468 && summary.token == 1)
        guard case .found(let book) = objects.first else { Issue.record("the first hit did not resolve"); return }
        #expect(book.objectID.entityName == "Book" && book.attributes["title"]?.stringValue?.hasPrefix("title 13 ") == true)
        #expect(objects.count == hits.count)
    }
}
