import Dispatch
import GRDB
import GRDBSQLite

/// A deadline SQLite's progress handler checks while a search's statements run.
private final class SearchDeadline {
    let nanoseconds: UInt64
    init(seconds: Double) {
        nanoseconds = DispatchTime.now().uptimeNanoseconds &+ UInt64(max(0, min(seconds, 86_400)) * 1e9)
    }
}

extension Database {
    /// Runs `body` with every statement interrupted once `seconds` have passed since it began, so that no
    /// query (a wide radius with many prefixes, say) holds the read transaction without bound.
    func withTimeLimit<T>(_ seconds: Double, _ body: () throws -> T) throws -> T {
        let deadline = Unmanaged.passRetained(SearchDeadline(seconds: seconds))
        // Every 1,000 virtual-machine steps: a few microseconds between checks.
        sqlite3_progress_handler(sqliteConnection, 1_000, { context in
            guard let context else { return 0 }
            let deadline = Unmanaged<SearchDeadline>.fromOpaque(context).takeUnretainedValue()
            return DispatchTime.now().uptimeNanoseconds > deadline.nanoseconds ? 1 : 0
        }, deadline.toOpaque())
        defer {
            sqlite3_progress_handler(sqliteConnection, 0, nil, nil)
            deadline.release()
        }
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            // The deadline, or GRDB interrupting a cancelled task's statement (it says CancellationError for the
            // statements it steps; the bulk reads step SQLite themselves and see the interrupt as it is).
            if DispatchTime.now().uptimeNanoseconds > deadline.takeUnretainedValue().nanoseconds {
                throw SearchIndexError.searchTooExpensive(seconds: seconds)
            }
            throw CancellationError()
        }
    }
}
