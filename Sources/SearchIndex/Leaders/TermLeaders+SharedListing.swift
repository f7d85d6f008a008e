import Foundation
import GRDB
import Synchronization

/// An export's end listed on both cores: a reader's connection beside the writer's.
///
/// The lists, the typo dictionary and its windows were made in the writer's transaction, one after the
/// other, after every item was written: 2.7 s of a 13 s first export of the full Corpus (235,160 objects),
/// on one core while the other idled. They read only what is committed, so once the items are (see
/// ``SearchIndex/finishExport(_:clearingRebuildMarks:)``), a reader's snapshot sees what the writer sees: the
/// reader scans the vocabulary once, handing the writer its terms for the dictionary and then the keys, samples
/// the names for phrases, and makes lists; the writer fills the dictionary as the terms come, builds the
/// windows, registers what is listed later, then makes lists too, writing its own and the reader's.
extension TermLeaders {
    /// What the reader hands the writer first, in order: the vocabulary's terms in blocks, then its keys.
    enum Vocabulary: Sendable {
        /// Terms of the vocabulary, in byte order, for the typo dictionary.
        case terms(TermBlock)
        /// The end of the vocabulary: the keys its pass found (``candidateKeys(minimumDocuments:minimumTermDocuments:db:eachTerm:)``).
        case keys([(key: String, documents: Int)])
    }

    /// Terms in one buffer: a `String` each would cost an allocation per term (686,662 of them at 235,160 items).
    struct TermBlock: Sendable {
        /// The handed bytes a block holds before it is handed over.
        static let capacity = 1 << 16

        private(set) var bytes: [UInt8] = []
        private var ends: [UInt32] = []

        var isFull: Bool { bytes.count >= Self.capacity }
        var isEmpty: Bool { ends.isEmpty }

        mutating func append(_ term: UnsafeBufferPointer<UInt8>) {
            bytes.append(contentsOf: term)
            ends.append(UInt32(bytes.count))
        }

        /// Hands each term to `body`, in order.
        func forEach(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
            try bytes.withUnsafeBufferPointer { buffer in
                var start = 0
                for end in ends {
                    try body(UnsafeBufferPointer(rebasing: buffer[start..<Int(end)]))
                    start = Int(end)
                }
            }
        }
    }

    /// The keys left to list, each taken by whichever connection is free first.
    final class ListingJobs: Sendable {
        /// What ``take()`` answers.
        enum Taken {
            /// A key to list, listed when held by `minimumDocuments` rows or more.
            case key(String, minimumDocuments: Int)
            /// None now; the reader may add more.
            case later
            /// None, and none will come.
            case done
        }

        private struct State {
            var keys: [(key: String, minimumDocuments: Int)] = []
            var next = 0
            var closed = false
            var cancelled = false
        }
        private let state = Mutex(State())

        /// Adds keys to list; false once cancelled (nothing is added then).
        func add(_ keys: [(key: String, minimumDocuments: Int)]) -> Bool {
            state.withLock { state in
                guard !state.cancelled else { return false }
                state.keys += keys
                return true
            }
        }

        /// No more keys will be added.
        func close() {
            state.withLock { $0.closed = true }
        }

        /// Drops the keys not taken yet, and any added later: the writer failed.
        func cancel() {
            state.withLock { state in
                state.next = state.keys.count
                state.closed = true
                state.cancelled = true
            }
        }

        /// The next key not taken.
        func take() -> Taken {
            state.withLock { state in
                guard state.next < state.keys.count else { return state.closed ? .done : .later }
                defer { state.next += 1 }
                return .key(state.keys[state.next].key, minimumDocuments: state.keys[state.next].minimumDocuments)
            }
        }
    }

    /// The reader's page cache while it lists (`PRAGMA cache_size`: negative in KiB).
    static let readerCachePages = -16_384

    /// The reader stopped because the writer gave up: not an error of its own.
    private struct Stopped: Error {}

    /// ``refresh(_:minimumDocuments:registeringDocuments:listingPrefixes:refillingDictionary:depths:)``'s
    /// work at an export's end, with the typo dictionary refilled and prefixes registered, shared with a
    /// connection of `reader` on a thread of its own. `db` must be a write transaction whose data `reader`'s
    /// new snapshots see: the items are committed, and nothing but this transaction writes meanwhile (GRDB
    /// begins it `IMMEDIATE`: it holds the write lock before the reader's snapshot begins). `reader` must
    /// read on connections of its own, a pool's: one waiting for `db`'s would wait for this call.
    static func refresh(_ db: Database, sharingWith reader: any DatabaseReader, minimumDocuments: Int = minimumDocuments,
                        registeringDocuments: Int = registeredDocuments, depths: PlacedDepths = .standard) throws {
        // What this transaction wrote so far is what the new lists describe: its touches are spent.
        try saveTouched(db)
        try forgetAll(db)
        let registering = Swift.min(registeringDocuments, minimumDocuments)
        // The vocabulary's blocks are not held back by the dictionary's inserts, which take longer than the
        // pass (at most 256 blocks of 64 KiB and their offsets in flight: 24 MiB); a few lists are (a list
        // takes up to a few megabytes: a tail's 131,072 entries).
        let vocabulary = PageQueue<Vocabulary>(capacity: 256)
        let lists = PageQueue<MadeList>(capacity: 4)
        let jobs = ListingJobs()
        let ended = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { ended.signal() }
            var failure: (any Error)?
            do {
                try reader.read { db in
                    // A smaller page cache than a search's, given back after: the reader's pages are the
                    // process's resident memory beside the writer's (a 64 MiB cache filled took the full
                    // Corpus's export from 276 to 337 MB at its peak).
                    let pages = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
                    try db.execute(sql: "PRAGMA cache_size = \(readerCachePages)")
                    defer { try? db.execute(sql: "PRAGMA cache_size = \(pages); PRAGMA shrink_memory") }
                    try withoutMemoryMap(db) {
                        try makeLists(db, minimumDocuments: minimumDocuments, registering: registering, depths: depths, vocabulary: vocabulary,
                                      lists: lists, jobs: jobs)
                    }
                }
            } catch is Stopped {
            } catch {
                failure = error
            }
            vocabulary.finish(failure)
            lists.finish(failure)
        }
        thread.name = "searchlight lists"
        thread.start()
        // Nothing the reader holds outlives this transaction: it is stopped and awaited, whatever happens.
        defer {
            jobs.cancel()
            vocabulary.cancel()
            lists.cancel()
            ended.wait()
        }
        var keys: [(key: String, documents: Int)]?
        try TermDictionary.refill(db) { keep in
            while keys == nil, let item = try vocabulary.next() {
                switch item {
                case .terms(let block): try block.forEach(keep)
                case .keys(let found): keys = found
                }
            }
        }
        // The reader hands its keys before it ends, unless it failed (thrown above).
        guard let keys else { throw DatabaseError(resultCode: .SQLITE_ERROR, message: "the index's vocabulary was not read to its end") }
        for (key, documents) in keys where !listsAtOnce(key, documents: documents, minimumDocuments: minimumDocuments, listingPrefixes: false) {
            try register(key, documents: documents, db: db)
        }
        try withoutMemoryMap(db) {
            while true {
                while let made = try lists.nextIfWaiting() { try save(made, db: db) }
                switch jobs.take() {
                case .key(let key, let minimum):
                    if let made = try made(key, minimumDocuments: minimum, depths: depths, db: db) { try save(made, db: db) }
                case .later:
                    // The reader is sampling phrases: its next list, or its end, comes.
                    if let made = try lists.next() { try save(made, db: db) }
                case .done:
                    while let made = try lists.next() { try save(made, db: db) }
                    return
                }
            }
        }
        try bumpGeneration(db)
    }

    /// The reader's part: the vocabulary's pass, the phrases' sample, then lists while keys are left.
    private static func makeLists(_ db: Database, minimumDocuments: Int, registering: Int, depths: PlacedDepths, vocabulary: PageQueue<Vocabulary>,
                                  lists: PageQueue<MadeList>, jobs: ListingJobs) throws {
        // The writer ends when the jobs do: they close whatever stops the reader.
        defer { jobs.close() }
        func hand<Item>(_ item: Item, to queue: PageQueue<Item>) throws {
            guard queue.put(item) else { throw Stopped() }
        }
        var block = TermBlock()
        let keys = try candidateKeys(minimumDocuments: minimumDocuments, minimumTermDocuments: registering, db: db) { term in
            block.append(term)
            if block.isFull {
                try hand(Vocabulary.terms(block), to: vocabulary)
                block = TermBlock()
            }
        }
        if !block.isEmpty { try hand(Vocabulary.terms(block), to: vocabulary) }
        try hand(Vocabulary.keys(keys), to: vocabulary)
        // The phrases' sample reads 65,536 names: not for a writer that gave up, which waits for this thread.
        let listed = keys.filter { listsAtOnce($0.key, documents: $0.documents, minimumDocuments: minimumDocuments, listingPrefixes: false) }
        guard jobs.add(listed.map { ($0.key, minimumDocuments) }) else { throw Stopped() }
        guard jobs.add(try candidatePhrases(minimumDocuments: minimumDocuments, db: db).map { ($0, minimumPhraseDocuments(minimumDocuments)) })
        else { throw Stopped() }
        jobs.close()
        while case .key(let key, let minimum) = jobs.take() {
            if let made = try made(key, minimumDocuments: minimum, depths: depths, db: db) { try hand(made, to: lists) }
        }
    }
}
