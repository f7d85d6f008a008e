import CoreDataStore
import Foundation
import Indexer
import SearchIndex
import Testing
import TestScratch

/// The README's library example, as written there, on a copy of an Apple-written store.
@Suite("The README's library example", .ownThread)
struct LibraryExampleTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    @Test("the service follows a store, a search, the hits resolved back to objects, a typo and a suggestion", .enabled(if: ExporterTests.fixtures, "../shared/fixtures is absent"))
    func example() async throws {
        let directory = try TestFolder.make("library")
        let store = directory.appendingPathComponent("App.sqlite").path
        let indexFile = directory.appendingPathComponent("App.searchindex").path
        try FileManager.default.copyItem(atPath: ExporterTests.shared.appendingPathComponent("SampleModel2_V1.sqlite").path, toPath: store)

        // The README's lines, with its two file names as the variables above.
        let service = IndexingService(indexPath: indexFile, stores: [.init(path: store)])
        let events = service.events                                     // subscribe before start()
        try service.start()                                             // first export, then history, until stop()
        var caughtUp: Exporter.Summary?
        for await event in events {                                     // .indexDidUpdate, .rebuildStarted, .stalled, …
            guard case .caughtUp(let summary) = event else { continue }
            print("indexed \(summary.inserted) items up to token \(summary.token)")
            caughtUp = summary
            break
        }
        let index = try SearchIndex(path: indexFile, mode: .readOnly)   // concurrent searches run in parallel
        let hits = try await index.search(SearchRequest(query: "title 13")).hits
        let objects = try DeepLinkResolver(index: index).resolve(hits.map(\.uri))   // back to the objects
        var typed = SearchRequest(query: "titel 13")                    // a typo: finds "title 13" all the same
        typed.typoTolerance = false                                     // as typed (--exact): nothing, and
        let suggestion = try await index.search(typed).suggestion?.query  // "title 13"
        let nearby = SearchRequest(query: "station", near: try Coordinate(latitude: 35.68, longitude: 139.76), radius: 50_000)
        await service.stop()                                            // after the batch in hand

        #expect(caughtUp?.inserted == 5_468 && caughtUp?.token == 1)
        #expect(try await index.search(SearchRequest(query: "titel 13")).hits.first?.uri == hits.first?.uri)
        #expect(suggestion == "title 13")
        #expect(try await index.search(nearby).hits.isEmpty) // the books have no places
        guard case .found(let book) = objects.first else { Issue.record("the first hit did not resolve"); return }
        #expect(book.objectID.entityName == "Book" && book.attributes["title"]?.stringValue?.hasPrefix("title 13 ") == true)
        #expect(objects.count == hits.count)
        #expect(!service.isRunning)
    }

    @Test("every line of the README's example is in the test above, so the README compiles")
    func readmeMatches() throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let section = try #require(text.range(of: "## The library\n"))
        let block = try #require(text.range(of: "```swift\n", range: section.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "```", range: block.upperBound..<text.endIndex))
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let lines = text[block.upperBound..<end.lowerBound].split(separator: "\n").map {
            $0.replacingOccurrences(of: "\"App.sqlite\"", with: "store").replacingOccurrences(of: "\"App.searchindex\"", with: "indexFile")
        }
        #expect(lines.count > 10)
        let missing = lines.filter { !$0.hasPrefix("import ") && !$0.trimmingCharacters(in: .whitespaces).isEmpty && !source.contains($0) }
        #expect(missing.isEmpty, "README lines not in the test: \(missing)")
    }
}
