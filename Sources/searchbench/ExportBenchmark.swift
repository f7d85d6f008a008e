import ArgumentParser
import CSearchTokenizer
import CoreDataStoreWriter
import Foundation
import GRDBSQLite
import SearchIndex

/// A first export end to end — `searchctl index` of the Places Corpus, in its own process — beside the
/// ceiling: SQLite's own C code moving the same rows from the store into the same tables with
/// `INSERT … SELECT`, with the same tokenizer.
struct ExportBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "A first export end to end (searchctl index of the Corpus) against SQLite's INSERT … SELECT into the same tables.")

    @Option(help: CorpusRunOptions.sizeHelp)
    var corpus = "full"

    @Option(help: "Runs of each, interleaved; the best and the median are reported.")
    var runs = 3

    @Flag(help: "Keep the last run's index and ceiling files (to compare their rows).")
    var keep = false

    @OptionGroup var files: CorpusRunOptions

    func run() throws {
        let store = files.file("searchbench-export-\(corpus).sqlite")
        let index = files.file("searchbench-export-\(corpus).searchindex")
        let ceiling = files.file("searchbench-export-\(corpus).ceiling")
        let config = try files.configuration()
        let binaries = files.binaries
        try files.writeCorpus(size: corpus, to: store)
        let items = try Self.objectCount(store: store)
        let (largest, largestPlaces) = try StormBenchmark.largestCountry(store: store)
        var ours: [ChildProcess.Outcome] = [], ceilings: [(seconds: Double, rows: Int)] = [], renames: [Double] = []
        for run in 1...max(1, runs) {
            Self.remove(index)
            let outcome = try ChildProcess.run(binaries + "/searchctl", ["index", "--store", store, "--config", config, "--index", index, "--quiet"])
            guard outcome.status == 0 else { throw BenchmarkError("searchctl index failed (exit \(outcome.status))") }
            ours.append(outcome)
            // The same index catching up on one save that renames the country with the most places: every
            // one of them shows its name, so each is re-indexed (the issue's "follow storm" per item). The
            // name is this process's own: a reused store holds an earlier run's, and a rename to it changes nothing.
            var save = SaveRequest()
            save.update(.saved(largest), attributes: ["name": .string("Renamedland \(run) \(getpid())")])
            _ = try StoreWriter(path: store).save(save)
            let rename = try ChildProcess.run(binaries + "/searchctl", ["index", "--store", store, "--config", config, "--index", index, "--quiet"])
            guard rename.status == 0 else { throw BenchmarkError("searchctl index (catching up on the rename) failed (exit \(rename.status))") }
            renames.append(rename.seconds)
            Self.remove(ceiling)
            var rows = 0
            let seconds = try Clock.seconds { rows = try Self.ceilingExport(store: store, into: ceiling) }
            let moved = (seconds: seconds, rows: rows)
            ceilings.append(moved)
            FileHandle.standardError.write(Data("run \(run): searchctl index \(String(format: "%.2f", outcome.seconds)) s, rename \(String(format: "%.2f", rename.seconds)) s, ceiling \(String(format: "%.2f", moved.seconds)) s\n".utf8))
        }
        if !keep {
            Self.remove(index)
            Self.remove(ceiling)
        }
        let oursBest = ours.map(\.seconds).min() ?? 0, ceilingBest = ceilings.map(\.seconds).min() ?? 0
        let oursMedian = IndexBenchmark.percentiles(ours.map(\.seconds)).0, ceilingMedian = IndexBenchmark.percentiles(ceilings.map(\.seconds)).0
        func rate(_ seconds: Double) -> String { seconds > 0 ? String(Int((Double(items) / seconds).rounded())) : "–" }
        print("export: the \(corpus) Corpus, \(items) objects, \(runs) runs each, interleaved")
        print("machine: \(machineDescription())")
        print("")
        print("| measure | searchctl index (end to end) | ceiling (INSERT … SELECT) | ratio |")
        print("|---|---:|---:|---:|")
        print("| best (items/s) | \(rate(oursBest)) | \(rate(ceilingBest)) | \(String(format: "%.2f", ceilingBest / oursBest))× |")
        print("| median (items/s) | \(rate(oursMedian)) | \(rate(ceilingMedian)) | \(String(format: "%.2f", ceilingMedian / oursMedian))× |")
        let renameBest = renames.min() ?? 0, renameMedian = IndexBenchmark.percentiles(renames).0
        func renameRate(_ seconds: Double) -> String { seconds > 0 ? String(Int((Double(largestPlaces) / seconds).rounded())) : "–" }
        print("| country renamed, \(largestPlaces) places re-indexed: best / median (items/s) | \(renameRate(renameBest)) / \(renameRate(renameMedian)) | | "
            + "\(String(format: "%.2f", oursBest * Double(largestPlaces) / Double(items) / renameBest))× / "
            + "\(String(format: "%.2f", oursMedian * Double(largestPlaces) / Double(items) / renameMedian))× of the export's |")
        print("| peak memory (MiB) | \((ours.map(\.maximumResidentKiB).max() ?? 0) / 1024) | | |")
        print("| rows moved by the ceiling | | \(ceilings.first?.rows ?? 0) | |")
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    static func objectCount(store: String) throws -> Int {
        let connection = try RawSQLite(path: "file:\(store)?mode=ro")
        let statement = try connection.statement("SELECT (SELECT COUNT(*) FROM ZPLACE) + (SELECT COUNT(*) FROM ZCOUNTRY)")
        guard sqlite3_step(statement) == SQLITE_ROW else { throw BenchmarkError("cannot count the store's objects") }
        return Int(sqlite3_column_int64(statement, 0))
    }

    /// The ceiling: the index's tables (same columns, indexes, FTS5 over the same tokenizer, R-tree), filled
    /// from the store by SQLite alone in one transaction — the texts as the Corpus configuration builds them
    /// (ASCII name, each alternate name, the country's name; the country code as keyword), places and
    /// countries, their filter attributes. What it leaves out is what only Searchlight knows: each value's
    /// token count, the typo dictionary. Returns the rows written.
    static func ceilingExport(store: String, into path: String) throws -> Int {
        let db = try RawSQLite(path: path)
        guard searchlight_register_tokenizer(db.db) == SQLITE_OK else { throw BenchmarkError("cannot register the searchlight tokenizer") }
        try db.execute("""
            PRAGMA journal_mode = WAL; PRAGMA cache_size = -65536;
            CREATE TABLE items (id INTEGER PRIMARY KEY, uri TEXT NOT NULL UNIQUE, store_id INTEGER NOT NULL, entity TEXT NOT NULL,
                display_name TEXT NOT NULL, latitude REAL, longitude REAL, date REAL, rank REAL NOT NULL, attributes TEXT NOT NULL);
            CREATE TABLE item_texts (id INTEGER PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL, keywords TEXT NOT NULL);
            CREATE VIEW items_content AS SELECT i.id AS id, i.display_name AS display_name, t.title AS title, t.text AS text, t.keywords AS keywords
                FROM items i JOIN item_texts t ON t.id = i.id;
            CREATE VIRTUAL TABLE items_fts USING fts5(display_name, title, text, keywords, content='items_content', content_rowid='id',
                tokenize='searchlight');
            INSERT INTO items_fts (items_fts, rank) VALUES ('automerge', 8);
            CREATE VIRTUAL TABLE items_geo USING rtree(id, min_lat, max_lat, min_lon, max_lon);
            CREATE TABLE item_attributes (item_id INTEGER NOT NULL, name TEXT NOT NULL, kind INTEGER NOT NULL, number REAL, text TEXT);
            \(SearchIndex.attributeValueIndexes)
            \(SearchIndex.attributeItemIndex)
            ATTACH 'file:\(store)?mode=ro' AS store;
            BEGIN;
            -- Places keep their primary key as id, countries follow them.
            CREATE TEMP TABLE place_rows AS SELECT p.Z_PK AS id, p.*, c.ZNAME AS country_name, c.ZCODE AS country_code
                FROM store.ZPLACE p LEFT JOIN store.ZCOUNTRY c ON c.Z_PK = p.ZCOUNTRY;
            INSERT INTO items SELECT id, 'x-coredata://' || (SELECT Z_UUID FROM store.Z_METADATA) || '/Place/p' || Z_PK, 1, 'Place',
                ZNAME, ZLATITUDE, ZLONGITUDE, ZUPDATEDAT, COALESCE(ZPOPULATION, 0),
                'country=s' || COALESCE(country_code, '') || char(29) || 'population=n' || CAST(ZPOPULATION AS REAL) || char(29) || 'timeZone=s' || ZTIMEZONE
                FROM place_rows;
            INSERT INTO item_texts SELECT id, '',
                ZASCIINAME || char(31) || CASE WHEN COALESCE(ZALTERNATENAMES, '') = '' THEN ''
                    ELSE replace(ZALTERNATENAMES, ', ', char(31)) || char(31) END || COALESCE(country_name, ''),
                COALESCE(country_code, '') FROM place_rows;
            INSERT INTO items_fts (rowid, display_name, title, text, keywords) SELECT i.id, i.display_name, t.title, t.text, t.keywords
                FROM items i JOIN item_texts t ON t.id = i.id;
            INSERT INTO items_geo SELECT id, ZLATITUDE, ZLATITUDE, ZLONGITUDE, ZLONGITUDE FROM place_rows;
            INSERT INTO item_attributes SELECT id, 'population', 1, ZPOPULATION, NULL FROM place_rows;
            INSERT INTO item_attributes SELECT id, 'country', 0, NULL, country_code FROM place_rows;
            INSERT INTO item_attributes SELECT id, 'timeZone', 0, NULL, ZTIMEZONE FROM place_rows;
            INSERT INTO item_attributes SELECT id, 'updated', 2, ZUPDATEDAT, NULL FROM place_rows;
            INSERT INTO items SELECT (SELECT MAX(Z_PK) FROM store.ZPLACE) + Z_PK,
                'x-coredata://' || (SELECT Z_UUID FROM store.Z_METADATA) || '/Country/p' || Z_PK, 1, 'Country', ZNAME, NULL, NULL, NULL,
                COALESCE(ZPOPULATION, 0), 'continent=s' || ZCONTINENT || char(29) || 'population=n' || CAST(ZPOPULATION AS REAL) FROM store.ZCOUNTRY;
            INSERT INTO item_texts SELECT (SELECT MAX(Z_PK) FROM store.ZPLACE) + Z_PK, '', ZCODE || char(31) || ZCONTINENT, '' FROM store.ZCOUNTRY;
            INSERT INTO item_attributes SELECT (SELECT MAX(Z_PK) FROM store.ZPLACE) + Z_PK, 'population', 1, ZPOPULATION, NULL FROM store.ZCOUNTRY;
            INSERT INTO item_attributes SELECT (SELECT MAX(Z_PK) FROM store.ZPLACE) + Z_PK, 'continent', 0, NULL, ZCONTINENT FROM store.ZCOUNTRY;
            INSERT INTO items_fts (rowid, display_name, title, text, keywords) SELECT i.id, i.display_name, t.title, t.text, t.keywords
                FROM items i JOIN item_texts t ON t.id = i.id WHERE i.entity = 'Country';
            COMMIT;
            INSERT INTO items_fts (items_fts) VALUES ('optimize');
            PRAGMA wal_checkpoint(TRUNCATE);
            """)
        let count = try db.statement("SELECT (SELECT COUNT(*) FROM items) + (SELECT COUNT(*) FROM item_texts) + (SELECT COUNT(*) FROM items_geo) + (SELECT COUNT(*) FROM item_attributes) + (SELECT COUNT(*) FROM items_fts)")
        guard sqlite3_step(count) == SQLITE_ROW else { throw BenchmarkError("cannot count the ceiling's rows") }
        return Int(sqlite3_column_int64(count, 0))
    }
}

/// A child process run to completion, with its wall time and peak memory (wait4's rusage).
enum ChildProcess {
    struct Outcome {
        var status: Int32
        var seconds: Double
        var maximumResidentKiB: Int
    }

    static func run(_ path: String, _ arguments: [String]) throws -> Outcome {
        try wait(try spawn(path, arguments))
    }

    /// A child started and not yet waited for: its pid and when it started.
    struct Running {
        var pid: pid_t
        var path: String
        var started: UInt64
    }

    /// Starts a program without waiting for it (several run at once: a fleet of exporters).
    static func spawn(_ path: String, _ arguments: [String]) throws -> Running {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let started = DispatchTime.now().uptimeNanoseconds
        let spawned = posix_spawn(&pid, path, nil, nil, argv, environ)
        guard spawned == 0 else { throw BenchmarkError("cannot run \(path): \(String(cString: strerror(spawned)))") }
        return Running(pid: pid, path: path, started: started)
    }

    /// Waits for a child started by ``spawn(_:_:)``: its exit status, seconds and peak memory.
    static func wait(_ child: Running) throws -> Outcome {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child.pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchmarkError("wait4 failed for \(child.path)") }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - child.started) / 1e9
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Outcome(status: exit, seconds: seconds, maximumResidentKiB: Int(usage.ru_maxrss))
    }
}
