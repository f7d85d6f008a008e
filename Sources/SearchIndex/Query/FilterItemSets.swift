import GRDB
import GRDBSQLite
import Synchronization

/// The items of filter comparisons (equalities and ranges) that searches read, kept per connection for the
/// searches after them: an app's filter (a country picked beside a search field) stays while the words change at
/// every keystroke.
///
/// A frequent word beside a filter keeping many items probes each of its rows against the attribute index
/// (0.45 µs a row): `city` in France, 63,684 rows, 29 ms at 939,632 places. Reading a comparison's items once
/// (0.1 µs an id, from the covering index of schema 18) and checking rows against them in C (0.1 µs) can cost
/// more than one such search: the United States hold 87,132 of them. So a connection reads them once the probes
/// it spent on the same comparison would have paid for reading them — as a skier buys skis once the rentals
/// would have — and keeps them while nothing is written. How many it keeps is unknown until read (a sample's
/// estimate fails when ids cluster: the United States' first 256 places are consecutive, and estimate the whole
/// index), so a read stops where the probes' budget ends; one that did not reach the end waits for twice as
/// much. The reads and probes a connection spends on a comparison stay within a small factor of the cheaper of
/// the two ways.
///
/// Facets count the same way: a facet looks each match up in the attribute index, until the lookups a connection
/// spent on an attribute would have read its whole column (``FacetColumn``); then the column is read and kept.
///
/// The sets are keyed by the connection's `PRAGMA data_version` (others' commits) and its own change count
/// (its commits, which `data_version` leaves out), both read inside the search's read transaction, so a set
/// is only ever used in the snapshot it was read in or one with the same items. A ``SearchIndex`` owns one
/// for its connections, which share a budget of ``mostKeptIDs`` (the least recently used go first) and let
/// go of it with the index.
final class FilterItemSets: Sendable {
    /// The most ids kept, over every connection of an index (8 bytes each: 32 MB); a facet column counts as
    /// the ids its bytes would hold.
    static let mostKeptIDs = 4_000_000
    /// The most ids one set may hold.
    static let mostIDsPerSet = 1_000_000
    /// The cost of probing a row against the attribute index, in µs (939,632 places).
    static let probeCost = 0.45
    /// The cost of reading an id through the attribute index, in µs: 0.05–0.07 in SQLite's shell (87,132 ids of
    /// `country == "US"` in 4–6 ms; 0.22 µs before the index covered them), and the array they go to.
    static let readCost = 0.1

    /// A connection's state of its files, as searches see it.
    struct Version: Equatable {
        var dataVersion: Int64
        var changes: Int64

        /// The version a read transaction on `db` sees.
        init(_ db: Database) throws {
            dataVersion = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
            changes = sqlite3_total_changes64(db.sqliteConnection)
        }
    }

    private struct Kept {
        enum Content {
            case ids([Int64])
            case column(FacetColumn)
        }

        var content: Content
        var lastUse: UInt64

        /// Its share of ``mostKeptIDs``.
        var size: Int {
            switch content {
            case .ids(let ids): ids.count
            case .column(let column): column.keptSize
            }
        }
    }

    private struct Spending {
        /// In µs.
        var cost = 0.0
        /// The fewest ids worth a read: more than a read found, twice over.
        var atLeast = 0
    }

    private struct Connection {
        var version: Version
        var sets: [String: Kept] = [:]
        /// The probing spent on each comparison not read yet, or found to keep more than was read.
        var spent: [String: Spending] = [:]
    }

    private struct State {
        var connections: [UInt: Connection] = [:]
        var keptIDs = 0
        var clock: UInt64 = 0

        /// Runs `body` on the connection's state at `version`: what it kept of an earlier version is dropped.
        mutating func update<T>(_ db: Database, at version: Version, _ body: (inout Connection) -> T) -> T {
            let key = UInt(bitPattern: db.sqliteConnection)
            if connections[key]?.version != version { forget(key) }
            return body(&connections[key, default: Connection(version: version)])
        }

        mutating func forget(_ key: UInt) {
            guard let connection = connections.removeValue(forKey: key) else { return }
            keptIDs -= connection.sets.values.reduce(0) { $0 + $1.size }
        }
    }

    private let state = Mutex(State())

    /// An empty cache, for one index's connections.
    init() {}

    /// Forgets what a connection kept: called when a connection opens, since a new one may reuse the
    /// address of one closed before.
    func opened(_ db: Database) {
        state.withLock { $0.forget(UInt(bitPattern: db.sqliteConnection)) }
    }

    /// The items kept for `key` on this connection at this version.
    func ids(for key: String, db: Database, version: Version) -> [Int64]? {
        state.withLock { state in
            state.clock += 1
            let now = state.clock
            return state.update(db, at: version) { connection in
                guard case .ids(let ids) = connection.sets[key]?.content else { return nil }
                connection.sets[key]?.lastUse = now
                return ids
            }
        }
    }

    /// The facet column kept for `key` on this connection at this version.
    func column(for key: String, db: Database, version: Version) -> FacetColumn? {
        state.withLock { state in
            state.clock += 1
            let now = state.clock
            return state.update(db, at: version) { connection in
                guard case .column(let column) = connection.sets[key]?.content else { return nil }
                connection.sets[key]?.lastUse = now
                return column
            }
        }
    }

    /// How many more rows this connection may look up for `key` before its lookups would have paid for
    /// reading `rows` rows instead; `Int.max` when `key` is known to be too large to keep.
    func lookupsLeft(beforeReading rows: Int, on key: String, db: Database, version: Version) -> Int {
        state.withLock { state in
            state.update(db, at: version) { connection in
                let spending = connection.spent[key] ?? Spending()
                guard spending.atLeast != Int.max else { return Int.max }
                return max(0, Int(((Double(rows) * Self.readCost - spending.cost) / Self.probeCost).rounded(.up)))
            }
        }
    }

    /// Whether `key` is known to keep more items than were read: its searches probe, spending, without a sample.
    func keepsMany(_ key: String, db: Database, version: Version) -> Bool {
        state.withLock { $0.update(db, at: version) { $0.spent[key] != nil } }
    }

    /// Adds `cost` (µs) of probing to what the connection spent on `key`; returns how many ids that would
    /// have read, if at least as many as the comparison is known to keep (nil otherwise: probe).
    /// `atLeast`: the ids it is known to keep.
    func spend(_ cost: Double, atLeast: Int, on key: String, db: Database, version: Version) -> Int? {
        state.withLock { state in
            state.update(db, at: version) { connection in
                // This search's probes count too: a read that fails costs it at most as much again as probing
                // (measured eager, text + country filter p99 22.6–25.4 ms; 31.6–36.1 waiting for a second search).
                connection.spent[key, default: Spending(atLeast: atLeast)].cost += cost
                let spending = connection.spent[key] ?? Spending()
                let affordable = spending.cost / Self.readCost
                guard affordable >= Double(spending.atLeast) else { return nil }
                return Int(min(affordable, Double(Self.mostIDsPerSet)))
            }
        }
    }

    /// Notes that `key` keeps more than `count` items, read for nothing: the probes start paying again, for
    /// twice as many at least. Past ``mostIDsPerSet`` the connection probes it until the index changes.
    func keepsMore(than count: Int, key: String, db: Database, version: Version) {
        state.withLock { state in
            state.update(db, at: version) { connection in
                connection.spent[key] = Spending(cost: 0, atLeast: count >= Self.mostIDsPerSet ? Int.max : 2 * count)
            }
        }
    }

    /// Keeps `ids` for `key`, making room by dropping the sets used least recently, of any connection.
    func keep(_ ids: [Int64], for key: String, db: Database, version: Version) {
        keep(.ids(ids), for: key, db: db, version: version)
    }

    /// Keeps a facet column for `key`, making room as for ids; false when it is too large to keep.
    @discardableResult
    func keep(_ column: FacetColumn, for key: String, db: Database, version: Version) -> Bool {
        keep(.column(column), for: key, db: db, version: version)
    }

    @discardableResult
    private func keep(_ content: Kept.Content, for key: String, db: Database, version: Version) -> Bool {
        let kept = Kept(content: content, lastUse: 0)
        guard kept.size <= Self.mostKeptIDs else { return false }
        state.withLock { state in
            state.keptIDs -= state.update(db, at: version) { connection in
                connection.spent[key] = nil
                return connection.sets.removeValue(forKey: key)?.size ?? 0
            }
            while state.keptIDs + kept.size > Self.mostKeptIDs {
                let oldest = state.connections.flatMap { owner, connection in
                    connection.sets.map { (owner: owner, key: $0.key, lastUse: $0.value.lastUse, size: $0.value.size) }
                }.min { $0.lastUse < $1.lastUse }
                guard let oldest else { break }
                state.connections[oldest.owner]?.sets[oldest.key] = nil
                state.keptIDs -= oldest.size
            }
            state.clock += 1
            let now = state.clock
            state.update(db, at: version) { $0.sets[key] = Kept(content: content, lastUse: now) }
            state.keptIDs += kept.size
        }
        return true
    }
}
