import CoreDataStore
import CoreDataStoreWriter
import Foundation
@testable import Indexer
import SearchIndex
import Testing
import TestScratch

/// A store restored from a backup keeps its UUID but not its history: the index must never go on serving
/// items from a future the store no longer has.
@Suite("Stores restored from a backup")
struct RestoredStoreTests {
    let folder: URL = {
        let url = Scratch.folder.appendingPathComponent("restored-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    var path: String { folder.appendingPathComponent("Atlas.sqlite").path }
    var backup: String { folder.appendingPathComponent("backup.sqlite").path }

    func save(_ names: [String]) throws {
        let writer = try StoreWriter(path: path)
        var request = SaveRequest()
        for name in names { request.insert("Place", attributes: ["name": .string(name)]) }
        _ = try writer.save(request)
    }

    /// One catch-up with a fresh exporter, as `searchctl index` runs it.
    func index() async throws -> (Exporter.Summary, [String], Set<String>) {
        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: folder.appendingPathComponent("atlas.searchindex").path, mode: .readWrite(permissions: nil))
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(nil, model: store.model))
        defer { exporter.close() }
        var log: [String] = []
        let summary = try await exporter.catchUp(events: { log.append(ExporterTests.sentence($0)) })
        return (summary, log, Set(try await index.dump().map(\.displayName)))
    }

    /// A store holding "first", backed up, then given two more saves and indexed.
    func prepare() async throws {
        _ = try StoreWriter.create(at: path, model: try ExpressionTests.model())
        try save(["first"])
        try FileManager.default.copyItem(atPath: path, toPath: backup) // the writer closed: no -wal
        try save(["second"])
        try save(["third"])
        let (summary, _, names) = try await index()
        #expect(summary.token == 3 && names == ["first", "second", "third"])
    }

    func restore() throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: path)
    }

    @Test("history ending before the index's token: announced as a restore, rebuilt to the store's objects")
    func endsBeforeToken() async throws {
        try await prepare()
        try restore()
        let (summary, log, names) = try await index()
        #expect(summary.rebuildReason?.description.contains("restored from a backup") == true, "\(String(describing: summary.rebuildReason))")
        #expect(log.contains { $0.contains("restored from a backup") })
        #expect(names == ["first"])
        #expect(summary.token == 1)
    }

    @Test("restored and saved past the old token: the same numbers, other transactions, detected by their timestamps")
    func forkedHistory() async throws {
        try await prepare()
        try restore()
        try save(["fourth"])
        try save(["fifth"])
        let (summary, _, names) = try await index()
        #expect(summary.rebuildReason?.description.contains("restored from a backup and saved since") == true, "\(String(describing: summary.rebuildReason))")
        #expect(names == ["first", "fourth", "fifth"])
        #expect(summary.token == 3)
        // Then it is the history followed: the next run has nothing to do.
        let (again, _, _) = try await index()
        #expect(again.rebuildReason == nil && again.inserted == 0 && again.deleted == 0)
    }
}

/// A rebuild keeps the last complete state searchable: it writes every object again over the old items and
/// sweeps those it did not write (objects gone), resuming where it stopped.
@Suite("Rebuilds that keep the index searchable")
struct SearchableRebuildTests {
    @Test("interrupted after one page: old items still answer; finished later: exactly the store's objects")
    func interruptedRebuild() async throws {
        let (folder, path, writer) = try TestFolder.atlasStore("rebuild")
        var save = SaveRequest()
        for index in 0..<1_000 { save.insert("Place", attributes: ["name": .string("town\(index)"), "population": .integer(Int64(index))]) }
        let ids = try writer.save(save).insertedObjectIDs
        let indexPath = folder.appendingPathComponent("atlas.searchindex").path
        func exporter(_ json: String) throws -> Exporter {
            let store = try PersistentStore(path: path)
            let index = try SearchIndex(path: indexPath, mode: .readWrite(permissions: nil))
            return try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(try IndexConfiguration(json: Data(json.utf8)), model: store.model),
                                batchSize: 100)
        }
        do {
            let first = try exporter(#"{"entities": {"Place": {"displayName": "name"}}}"#)
            #expect(try await first.catchUp().inserted == 1_000)
            first.close()
        }
        // The configuration changes (a rebuild); its task is cancelled once a transaction wrote items, so it
        // stops after the next page. (A task of its own: cancellation stays with the task.)
        let changed = #"{"entities": {"Place": {"displayName": "name", "rank": "population"}}}"#
        let stopped = try await Task {
            let second = try exporter(changed)
            defer { second.close() }
            return try await second.catchUp(events: { event in
                if case .progress(_, let report) = event, report.itemsWritten > 0 { withUnsafeCurrentTask { $0?.cancel() } }
            })
        }.value
        #expect(stopped.stopped && stopped.rebuildReason != nil)
        // Stopped part way: a rebuild at some pages of the store's 1,000 objects.
        #expect(stopped.unfinished?.kind == .rebuild && stopped.unfinished?.objectCount == 1_000
                && (1..<1_000).contains(stopped.unfinished?.objectsExported ?? 0), "\(String(describing: stopped.unfinished))")
        let reader = try SearchIndex(path: indexPath, mode: .readOnly)
        #expect(try await reader.count(SearchRequest(query: "town999")) == 1) // the old item, still searchable
        #expect(try await reader.dump().count == 1_000)
        #expect(try reader.checkpoints().first.flatMap(ExportStatus.init(checkpoint:))?.kind == .rebuild)

        // Meanwhile the app deletes ten objects; the rebuild resumes and sweeps their items.
        var deletes = SaveRequest()
        for id in ids.prefix(10) { deletes.delete(id) }
        _ = try writer.save(deletes)
        let third = try exporter(changed)
        let summary = try await third.catchUp()
        #expect(!summary.stopped)
        let items = try await reader.dump()
        #expect(items.count == 990)
        #expect(Set(items.map(\.uri)) == Set(ids.dropFirst(10).map(\.uriRepresentation)))
        #expect(items.first { $0.displayName == "town999" }?.rank == 999)
        #expect(try reader.checkpoints().first?.exportState == nil)
    }
}
