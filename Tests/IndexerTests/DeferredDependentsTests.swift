import CoreDataStore
import CoreDataStoreWriter
import Foundation
import GRDB
@testable import Indexer
import SearchIndex
import SeededRandom
import Testing
import TestScratch

/// A big rename's dependents re-indexed a page at a time beside the history after it: the walk itself, a
/// save behind the rename committed before the walk, and walks resumed, restarted and dropped.
@Suite("Deferred dependents", .ownThread)
struct DeferredDependentsTests {
    let directory: URL = {
        let url = Scratch.folder.appendingPathComponent("deferred-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static func ids(_ keys: [Int64], entity: String = "Place") -> [ManagedObjectID] {
        keys.map { ManagedObjectID(storeUUID: "S", entityName: entity, primaryKey: $0) }
    }

    /// Walks `list` from `progress` to its end; each page's keys.
    static func walk(_ progress: DeferredDependents, over list: [ManagedObjectID], size: Int) -> [[Int64]] {
        var pages: [[Int64]] = []
        var next: DeferredDependents? = progress
        while let current = next {
            let (ids, after) = current.page(of: list, size: size)
            pages.append(ids.map(\.primaryKey))
            next = after
            #expect(pages.count <= list.count + 2, "the walk does not end")
            if pages.count > list.count + 2 { break }
        }
        return pages
    }

    @Test("a walk takes every dependent once, in order, in pages of the size asked; restarted anywhere, it takes each once more from there")
    func walkProperty() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<2_000 {
            let list = Self.ids(Array(Set((0..<Int.random(in: 0...40, using: &generator)).map { _ in Int64.random(in: 1...60, using: &generator) })).sorted())
            let size = Int.random(in: 1...7, using: &generator)
            let fresh = DeferredDependents(origin: 5)
            let pages = Self.walk(fresh, over: list, size: size)
            #expect(pages.flatMap { $0 } == list.map(\.primaryKey))
            #expect(pages.dropLast().allSatisfy { $0.count == size } && (pages.last?.count ?? 0) <= size)
            // Stopped after a random number of pages (perhaps after a restart already), then restarted.
            var progress: DeferredDependents? = fresh
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                guard let current = progress else { break }
                progress = current.page(of: list, size: size).next
                if Bool.random(using: &generator), let moved = progress { progress = moved.restarted(at: 9) }
            }
            guard let stopped = progress else { continue }
            let restarted = stopped.restarted(at: 12)
            #expect(restarted.origin == 5)
            let again = Self.walk(restarted, over: list, size: size).flatMap { $0 }
            #expect(again.sorted() == list.map(\.primaryKey), "\(list.map(\.primaryKey)) size \(size) from \(stopped)")
            // From where it was: first the rest of the list, then its start.
            if let after = stopped.after?.primaryKey, !stopped.wrapped {
                #expect(again == list.map(\.primaryKey).filter { $0 > after } + list.map(\.primaryKey).filter { $0 <= after })
            }
            #expect(DeferredDependents(text: restarted.text) == restarted)
        }
    }

    @Test("a progress that is not one (damaged, truncated, another shape) does not read")
    func damagedProgress() {
        for text in ["", "{", "null", "[]", "{\"origin\":\"x\"}", "{\"after\":{\"entity\":\"Place\",\"primaryKey\":1}}", "\u{0}"] {
            #expect(DeferredDependents(text: text) == nil, "\(text)")
        }
        var walk = DeferredDependents(origin: 3)
        walk.after = .init(Self.ids([7])[0])
        #expect(DeferredDependents(text: walk.text) == walk)
    }

    /// Japan with 600 places, Schweiz with 300, exported into an index beside the store; pages of 50.
    func atlas() async throws -> (path: String, writer: StoreWriter, japan: ManagedObjectID, schweiz: ManagedObjectID, places: [ManagedObjectID],
                                  index: SearchIndex, config: ResolvedConfiguration) {
        let path = directory.appendingPathComponent("atlas.sqlite").path
        let writer = try StoreWriter.create(at: path, model: try ExpressionTests.model())
        var save = SaveRequest()
        let countries = ["Japan", "Schweiz"].map { save.insert("Country", attributes: ["name": .string($0)]) }
        for index in 0..<900 {
            save.insert("Place", attributes: ["name": .string("town\(index)"), "latitude": .double(Double(index % 90)), "longitude": .double(1)],
                        relationships: ["country": .toOne(countries[index % 3 == 0 ? 1 : 0])])
        }
        let ids = try writer.save(save).insertedObjectIDs
        let config = try ResolvedConfiguration(IndexConfiguration(entities: ["Place": .fields(.init(text: ["country.name"]))]),
                                               model: try PersistentStore(path: path).model)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
        _ = try await exporter(path, index: index, config: config).catchUp()
        return (path, writer, ids[0], ids[1], Array(ids.dropFirst(2)), index, config)
    }

    func exporter(_ path: String, index: SearchIndex, config: ResolvedConfiguration) throws -> Exporter {
        try Exporter(store: try PersistentStore(path: path), index: index, configuration: config, batchSize: 50)
    }

    /// The index, item by item, equals a fresh export of the store as it is now.
    func expectFresh(_ path: String, _ index: SearchIndex, config: ResolvedConfiguration) async throws {
        let freshPath = directory.appendingPathComponent("fresh-\(UUID().uuidString).searchindex").path
        let fresh = try SearchIndex(path: freshPath, mode: .readWrite(permissions: nil))
        _ = try await Exporter(store: try PersistentStore(path: path), index: fresh, configuration: config).catchUp()
        let (followed, expected) = (try await index.dump(), try await fresh.dump())
        #expect(Set(followed) == Set(expected))
        #expect(try index.deferredDependents(storeUUID: try PersistentStore(path: path).metadata.storeUUID).isEmpty)
    }

    @Test("a country renamed with 600 places: walked in pages of 50, each a transaction; a reader never loses a place, the new name only grows")
    func walkedRename() async throws {
        let (path, writer, japan, _, _, index, config) = try await atlas()
        var save = SaveRequest()
        save.update(.saved(japan), attributes: ["name": .string("Nippon")])
        let token = try #require(try writer.save(save).transactionNumber)
        let reader = try SearchIndex(path: index.path, mode: .readOnly)
        let done = ManagedAtomicFlag()
        let seen = Thread.detachedResult {
            var counts: [(nippon: Int, either: Int)] = []
            while !done.isSet {
                // One read transaction: the new name's count, and either name's.
                if let both = try? reader.count(SearchRequest(query: "nippon")), let either = try? reader.count(SearchRequest(query: "japan OR nippon")) {
                    counts.append((both, either))
                }
            }
            return counts
        }
        let summary = try await exporter(path, index: index, config: config).catchUp()
        done.set()
        #expect(summary.token == token && summary.updated == 601, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nippon")) == 601)
        #expect(try await index.count(SearchRequest(query: "japan")) == 0)
        // Two reads, not one transaction: the new name's count may be behind either's, never a place short.
        #expect(seen.value.allSatisfy { $0.either == 601 && $0.nippon <= 601 })
        #expect(zip(seen.value, seen.value.dropFirst()).allSatisfy { $0.nippon <= $1.nippon })
        try await expectFresh(path, index, config: config)
    }

    @Test("a save behind a big rename is committed with the rename's own batch; the walk's pages follow, one transaction each")
    func saveBehindRename() async throws {
        let (path, writer, japan, schweiz, _, index, config) = try await atlas()
        let start = try #require(try index.checkpoint(storeUUID: try PersistentStore(path: path).metadata.storeUUID))
        var save = SaveRequest()
        save.update(.saved(japan), attributes: ["name": .string("Nippon")])
        try writer.save(save)
        save = SaveRequest()
        save.insert("Place", attributes: ["name": .string("latecomer")], relationships: ["country": .toOne(.saved(schweiz))])
        let second = try writer.save(save)
        let token = try #require(second.transactionNumber)
        let late = try #require(second.insertedObjectIDs.first).uriRepresentation
        let exporter = try exporter(path, index: index, config: config)
        let producer = HistoryProducer(store: exporter.store, index: index, builder: exporter.builder, digests: exporter.digests, batchSize: 50)
        let pages = PageQueue<HistoryPage>(capacity: 100)
        producer.run(after: start.token, deferred: [:], into: pages)
        var all: [HistoryPage] = []
        while let page = try pages.next() { all.append(page) }
        let ends = all.compactMap(\.end)
        // The history batch first: its token, the late save's item and Japan's own, and the walk's start.
        let first = try #require(ends.first)
        #expect(first.reached?.token == token)
        #expect(Set(first.deferredDependents.keys) == [japan.uriRepresentation])
        let batchItems = Set((all.prefix { $0.end == nil }.flatMap(\.items) + (all.first { $0.end != nil }?.items ?? [])).map(\.item.uri))
        // (Schweiz's own item too, when history records its to-many as changed.)
        #expect(batchItems.isSuperset(of: [late, japan.uriRepresentation]) && batchItems.count <= 3, "\(batchItems)")
        // Then the walk: twelve pages of 50 places, none moving the token, the last one finishing it.
        let walk = ends.dropFirst()
        #expect(walk.count == 12 && walk.allSatisfy { $0.reached == nil })
        #expect(all.suffix(12).allSatisfy { $0.items.count == 50 })
        #expect(walk.last?.finishedDeferredDependents == [japan.uriRepresentation])
        #expect(walk.dropLast().allSatisfy { $0.deferredDependents.keys.first == japan.uriRepresentation })
    }

    /// Japan renamed Nippon in the store, and an index whose token covers it with a walk of Japan's places
    /// stopped after the first `done` of them, which were re-indexed (by a catch-up that then stopped).
    func stoppedWalk(done: Int) async throws -> (path: String, writer: StoreWriter, japan: ManagedObjectID, japanPlaces: [ManagedObjectID],
                                                 index: SearchIndex, config: ResolvedConfiguration) {
        let (path, writer, japan, _, places, index, config) = try await atlas()
        let japanPlaces = places.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
        var save = SaveRequest()
        save.update(.saved(japan), attributes: ["name": .string("Nippon")])
        let token = try #require(try writer.save(save).transactionNumber)
        let store = try PersistentStore(path: path)
        var checkpoint = try #require(try index.checkpoint(storeUUID: store.metadata.storeUUID))
        checkpoint.token = token
        checkpoint.tokenTimestamp = try store.timestamp(ofTransaction: token)
        var walk = DeferredDependents(origin: token)
        walk.after = .init(japanPlaces[done - 1])
        let exporter = try exporter(path, index: index, config: config)
        let producer = HistoryProducer(store: store, index: index, builder: exporter.builder, digests: exporter.digests, batchSize: 50)
        let page = try store.read { snapshot throws in try producer.page(HistoryProducer.sorted(japanPlaces + [japan]).prefix(done + 1), changed: [], in: snapshot) }
        var batch = IndexBatch(prepared: page.items, checkpoint: checkpoint)
        batch.deferredDependents = [japan.uriRepresentation: walk.text]
        try index.apply(batch)
        return (path, writer, japan, japanPlaces, index, config)
    }

    @Test("a walk stopped midway resumes where it stopped: the places before its progress are not read again")
    func resumedWalk() async throws {
        let (path, _, _, japanPlaces, index, config) = try await stoppedWalk(done: 200)
        let before = try await index.dump()
        #expect(before.contains { $0.uri == japanPlaces[199].uriRepresentation && $0.text.contains("Nippon") })
        #expect(before.contains { $0.uri == japanPlaces[200].uriRepresentation && $0.text.contains("Japan") })
        // Resumed, not begun again: a walk from the start would find the first 200 unchanged.
        let summary = try await exporter(path, index: index, config: config).catchUp()
        #expect(summary.updated == 400 && summary.unchanged == 0, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nippon")) == 601)
        try await expectFresh(path, index, config: config)
    }

    @Test("the country renamed again midway: every place walked again from where the walk was, all showing the last name")
    func restartedWalk() async throws {
        let (path, writer, japan, _, index, config) = try await stoppedWalk(done: 200)
        var save = SaveRequest()
        save.update(.saved(japan), attributes: ["name": .string("Nihon")])
        try writer.save(save)
        let summary = try await exporter(path, index: index, config: config).catchUp()
        #expect(summary.updated == 601, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nihon")) == 601)
        #expect(try await index.count(SearchRequest(query: "nippon OR japan")) == 0)
        try await expectFresh(path, index, config: config)
    }

    @Test("the country deleted midway: its walk is dropped with its digest; its places, nullified, show no country")
    func deletedMidway() async throws {
        let (path, writer, japan, _, index, config) = try await stoppedWalk(done: 100)
        var save = SaveRequest()
        save.delete(japan)
        try writer.save(save)
        _ = try await exporter(path, index: index, config: config).catchUp()
        #expect(try await index.count(SearchRequest(query: "nippon OR japan")) == 0)
        try await expectFresh(path, index, config: config)
    }

    @Test("with a walk slice, a catch-up returns with walks left once history is written, and the next ones go on from there")
    func walkSlices() async throws {
        let (path, writer, japan, _, _, index, config) = try await atlas()
        var save = SaveRequest()
        save.update(.saved(japan), attributes: ["name": .string("Nippon")])
        try writer.save(save)
        let exporter = try exporter(path, index: index, config: config)
        exporter.walkSlice = 0
        var turns: [Exporter.Summary] = []
        repeat {
            turns.append(try await exporter.catchUp())
            // Status counts the walk while it goes on, and not once it ended.
            #expect(try IndexStatus.read(index: index).stores.map(\.deferredDependents) == [turns.last?.walksLeft == true ? 1 : 0])
        } while turns.last?.walksLeft == true && turns.count < 100
        // The rename's batch and a page in the first turn, then a page a turn: 12 pages of 50 places.
        #expect(turns.count == 12 && turns.dropLast().allSatisfy(\.walksLeft), "\(turns.count) turns")
        #expect(turns.reduce(0) { $0 + $1.updated } == 601)
        try await expectFresh(path, index, config: config)
    }

    @Test("a rebuild keeps the walks until its last page (one interrupted before it must not lose them), then ends them")
    func rebuildKeepsWalks() async throws {
        let (path, _, _, _, index, config) = try await stoppedWalk(done: 100)
        let uuid = try PersistentStore(path: path).metadata.storeUUID
        try index.beginRebuild(storeUUID: uuid)
        #expect(try index.deferredDependents(storeUUID: uuid).count == 1)
        let summary = try await exporter(path, index: index, config: config).catchUp(rebuild: true)
        #expect(summary.rebuildReason != nil, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nippon")) == 601)
        try await expectFresh(path, index, config: config)
    }

    @Test("a damaged progress (any type, any bytes) walks every dependent again; whole batches (defersDependents off) still finish a walk saved before",
          arguments: ["'not a progress'", "7", "x'00ff'", "3.5"])
    func damagedAndWhole(value: String) async throws {
        let (path, _, japan, _, index, config) = try await stoppedWalk(done: 300)
        let queue = try DatabaseQueue(path: index.path)
        try await queue.write { db in try db.execute(sql: "UPDATE deferred_dependents SET progress = \(value)") }
        try queue.close()
        let exporter = try exporter(path, index: index, config: config)
        exporter.defersDependents = false
        let summary = try await exporter.catchUp()
        // Every place again (the first 300 unchanged, so not rewritten), and the walk is gone.
        #expect(summary.updated == 300 && summary.unchanged == 300, "\(summary)")
        #expect(try await index.count(SearchRequest(query: "nippon")) == 601)
        _ = japan
        try await expectFresh(path, index, config: config)
    }
}
