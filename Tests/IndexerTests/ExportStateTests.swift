@testable import Indexer
import SearchIndex
import SeededRandom
import Testing

/// The resume state a first export or rebuild keeps in its checkpoint: what resumes it and what readers
/// are told must survive every round trip, and no other text may pass for one.
@Suite("Export states")
struct ExportStateTests {
    @Test("10,000 random states read back exactly as written, and report the same progress")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 12)
        for _ in 0..<10_000 {
            let count = Bool.random(using: &generator) ? Int64.random(in: 0...2_000_000, using: &generator) : nil
            let state = ExportState(t0: .random(in: 0...Int64.max, using: &generator), rootIndex: .random(in: 0...40, using: &generator),
                                    after: .random(in: 0...Int64.max, using: &generator), sweep: .random(using: &generator),
                                    objectsExported: count.map { .random(in: 0...$0 + 10, using: &generator) } ?? 0, objectCount: count)
            #expect(ExportState(state.text) == state, "\(state.text)")
            let status = try #require(ExportStatus(checkpoint: StoreCheckpoint(storeUUID: "u", storePath: "p", token: 0, exportState: state.text)))
            #expect(status.kind == (state.sweep ? .rebuild : .firstExport))
            #expect(status.objectCount == count.map(Int.init))
            // More objects than counted (saves during the export) never reads as over 100%.
            #expect(status.objectsExported == count.map { Int(min(state.objectsExported, $0)) })
        }
    }

    @Test("text that is not a state is not read as one; states written before counts still are")
    func malformed() {
        for text in ["", " ", "1 2", "1 2 3 4", "1 2 3 sweep sweep", "1 2 3 4/5 sweep", "1 2 3 4/", "1 2 3 /5", "1 2 3 4/5/6",
                     "a 2 3", "1 2 3 sweep 4/5 6", "1  2 3", "1 -1 0", "-1 0 0", "1 0 -5", "1 0 0 -1/5", "1 0 0 1/-5",
                     "1 99999999999999999999 0", StoreCheckpoint.removalInProgress] {
            #expect(ExportState(text) == nil, "\(text)")
        }
        for json in ["{}", "{\"version\":1}", "{\"after\":1,\"exported\":0,\"root\":0,\"sweep\":false,\"t0\":1,\"version\":2}",
                     "{\"after\":1,\"exported\":0,\"root\":0,\"sweep\":false,\"t0\":-1,\"version\":1}",
                     "{\"after\":1,\"exported\":0,\"root\":-3,\"sweep\":false,\"t0\":1,\"version\":1}",
                     "{\"after\":1,\"exported\":0,\"root\":0,\"sweep\":\"yes\",\"t0\":1,\"version\":1}",
                     "{\"after\":1,\"exported\":0,\"root\":0,\"sweep\":false,\"t0\":99999999999999999999,\"version\":1}", "{\"t0\""] {
            #expect(ExportState(json) == nil, "\(json)")
        }
        // Written as versioned JSON; text states of an earlier Searchlight still resume.
        #expect(ExportState(t0: 7, rootIndex: 1, after: 30, sweep: true, objectsExported: 5, objectCount: 9).text
                == "{\"after\":30,\"count\":9,\"exported\":5,\"root\":1,\"sweep\":true,\"t0\":7,\"version\":1}")
        #expect(ExportState("7 1 30 12/40") == ExportState(t0: 7, rootIndex: 1, after: 30, sweep: false, objectsExported: 12, objectCount: 40))
        #expect(ExportState("7 1 30") == ExportState(t0: 7, rootIndex: 1, after: 30, sweep: false))
        #expect(ExportState("7 1 30 sweep") == ExportState(t0: 7, rootIndex: 1, after: 30, sweep: true))
        #expect(ExportStatus(checkpoint: StoreCheckpoint(storeUUID: "u", storePath: "p", token: 0, exportState: StoreCheckpoint.removalInProgress))?.kind == .removal)
        #expect(ExportStatus(checkpoint: StoreCheckpoint(storeUUID: "u", storePath: "p", token: 0)) == nil)
    }

    @Test("100,000 random strings from the state's own alphabet: parsed ones are valid and read back the same; none traps")
    func garbage() {
        var generator = SeededGenerator(seed: 99)
        let pieces = ["0", "1", "7", "-", "/", " ", "sweep", "9223372036854775807", "9223372036854775808", "+3", "", "\u{0}", "٣"]
        var parsed = 0
        for _ in 0..<100_000 {
            // Two to six fields of one to three pieces: mostly near-states, with every kind of damage.
            let text = (0..<Int.random(in: 2...6, using: &generator)).map { _ in
                (0..<Int.random(in: 1...3, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined()
            }.joined(separator: " ")
            guard let state = ExportState(text) else { continue }
            parsed += 1
            #expect(state.t0 >= 0 && state.rootIndex >= 0 && state.after >= 0 && state.objectsExported >= 0 && (state.objectCount ?? 0) >= 0, "\(text)")
            #expect(ExportState(state.text) == state, "\(text)")
        }
        #expect(parsed > 100, "\(parsed)")
    }
}
