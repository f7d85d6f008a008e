import CoreDataStore
import Foundation
@testable import Indexer
import SeededRandom
import Testing

/// The coalescing stage alone: a pure function of a batch's transactions.
@Suite("Coalescing a history batch")
struct CoalescedChangesTests {
    @Test("2,000 random batches: each object is deleted if any change deleted it, else changed; every change is counted")
    func randomBatches() {
        var generator = SeededGenerator(seed: 41)
        let objects = (1...12).map { ManagedObjectID(storeUUID: "S", entityName: $0 % 3 == 0 ? "Country" : "Place", primaryKey: Int64($0)) }
        let types: [HistoryChange.ChangeType] = [.insert, .update, .delete]
        for _ in 0..<2_000 {
            var number: Int64 = 0
            let transactions = (0..<Int.random(in: 0...6, using: &generator)).map { index in
                HistoryTransaction(number: Int64(index + 1), timestamp: Date(timeIntervalSinceReferenceDate: Double(index)),
                                   changes: (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                    number += 1
                    return HistoryChange(number: number, objectID: objects.randomElement(using: &generator) ?? objects[0],
                                         type: types.randomElement(using: &generator) ?? .update)
                })
            }
            let coalesced = CoalescedChanges(transactions)
            // Brute force: replay each object's changes in order and keep what it ended as.
            var fate: [ManagedObjectID: Bool] = [:] // true: deleted at some point
            for change in transactions.flatMap(\.changes) { fate[change.objectID] = (fate[change.objectID] ?? false) || change.type == .delete }
            #expect(coalesced.deleted == Set(fate.filter { $0.value }.keys))
            #expect(coalesced.changed == Set(fate.filter { !$0.value }.keys))
            #expect(coalesced.changed.isDisjoint(with: coalesced.deleted))
            #expect(coalesced.changeCount == transactions.reduce(0) { $0 + $1.changes.count })
        }
    }

    @Test("an insert, updates and a delete of one object in one batch: a delete; an update after an insert: one change")
    func examples() {
        let place = ManagedObjectID(storeUUID: "S", entityName: "Place", primaryKey: 7)
        let other = ManagedObjectID(storeUUID: "S", entityName: "Place", primaryKey: 8)
        let batch = [
            HistoryTransaction(number: 1, timestamp: Date(), changes: [HistoryChange(number: 1, objectID: place, type: .insert),
                                                                       HistoryChange(number: 2, objectID: other, type: .insert)]),
            HistoryTransaction(number: 2, timestamp: Date(), changes: [HistoryChange(number: 3, objectID: place, type: .update),
                                                                       HistoryChange(number: 4, objectID: other, type: .update)]),
            HistoryTransaction(number: 3, timestamp: Date(), changes: [HistoryChange(number: 5, objectID: place, type: .delete)]),
        ]
        let coalesced = CoalescedChanges(batch)
        #expect(coalesced.deleted == [place] && coalesced.changed == [other] && coalesced.changeCount == 5)
        #expect(CoalescedChanges([]) == CoalescedChanges([HistoryTransaction(number: 1, timestamp: Date())]))
    }
}
