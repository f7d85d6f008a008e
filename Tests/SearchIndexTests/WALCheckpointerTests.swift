import Foundation
import GRDB
import GRDBSQLite
@testable import SearchIndex
import Testing

/// The log's checkpoints, run beside the writer: the log stays bounded however fast commits follow each
/// other, its pages reach the database file, and an index released leaves no log behind.
@Suite("Checkpoints beside the writer")
struct WALCheckpointerTests {
    /// Frames of the log file at `path` (a header of 32 bytes, then frames of a 24-byte header and a page).
    static func frames(_ path: String, pageSize: Int = 4096) -> Int {
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        return max(0, size - 32) / (pageSize + 24)
    }

    /// Commits `transactions` transactions of about 10 pages each, back to back, on a pool whose writer has
    /// `checkpointer` attached (or SQLite's automatic checkpoint off, without one).
    static func commitBackToBack(_ name: String, transactions: Int, checkpointer make: (String) -> WALCheckpointer?) throws -> (frames: Int, rows: Int, fileBytes: Int) {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("\(name).sqlite").path
        var configuration = Configuration()
        configuration.journalMode = .wal
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE pages (id INTEGER PRIMARY KEY, body BLOB)") }
        let checkpointer = make(path)
        pool.writeWithoutTransaction { db in
            guard let connection = db.sqliteConnection else { return }
            if let checkpointer { checkpointer.attach(to: connection) } else { sqlite3_wal_autocheckpoint(connection, 0) }
        }
        defer {
            if let checkpointer {
                pool.writeWithoutTransaction { db in if let connection = db.sqliteConnection { checkpointer.detach(from: connection) } }
                checkpointer.stop()
            }
        }
        for _ in 0..<transactions {
            // Ten rows of a page's worth of bytes: about ten pages a transaction.
            try pool.write { db in try db.execute(sql: """
                WITH RECURSIVE rows(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM rows WHERE n < 10)
                INSERT INTO pages (body) SELECT zeroblob(4000) FROM rows
                """) }
        }
        let frames = Self.frames(path)
        let rows = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM pages") ?? 0 }
        // The last commits' pages may still be only in the log: one checkpoint more copies them.
        checkpointer?.request(waiting: true)
        let fileBytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return (frames, rows, fileBytes)
    }

    @Test("commits back to back keep the log within a few transactions of the size at which a commit waits")
    func logStaysBounded() throws {
        // 300 transactions of ~10 pages: 3,000 pages in all, against a log that waits at 100.
        let bounded = try Self.commitBackToBack("wal-bounded", transactions: 300) {
            WALCheckpointer(path: $0, pagesBeforeCheckpoint: 20, pagesBeforeWaiting: 100)
        }
        // The same writes without any checkpoint: what the bound is measured against.
        let unbounded = try Self.commitBackToBack("wal-unbounded", transactions: 300) { _ in nil }
        #expect(unbounded.frames >= 3_000, "without checkpoints the log holds every page")
        #expect(bounded.frames <= 100 + 3 * 12, "the log restarted: \(bounded.frames) frames")
        #expect(bounded.rows == 3_000 && unbounded.rows == 3_000)
        // What the log no longer holds is in the database file.
        #expect(bounded.fileBytes >= 3_000 * 4_096)
    }

    @Test("an index written and released leaves no log behind, its checkpointer stopped after the writer's hook, and opens again")
    func indexClosesCleanly() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("wal-index.searchindex").path
        do {
            let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
            for batch in 0..<6 {
                let items = TermLeadersTests.items(batch * 500..<(batch + 1) * 500, seed: UInt64(batch)).map(PreparedItem.init)
                try index.apply(IndexBatch(prepared: items, checkpoint: IndexFixtures.checkpoint(Int64(batch + 1))))
            }
            #expect(Self.frames(path) <= Int(4_000 + 2_000), "the log is bounded")
        }
        // Released: the hook is gone before the checkpointer, and the pool's last connection checkpointed and removed the log.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let reopened = try SearchIndex(path: path, mode: .readOnly)
        #expect(try reopened.dump().count == 3_000)
    }
}
