import Foundation
import GRDB

/// What the SQLite file itself says: `Z_PRIMARYKEY`, tables with their columns, and the raw
/// metadata. Read once when a store opens; the model and layout are checked against it.
struct StoreCatalog: Sendable {
    struct PrimaryKeyRow: Sendable, Hashable {
        var entityNumber: Int
        var name: String
        var superNumber: Int
        var maxPrimaryKey: Int64
    }

    struct Column: Sendable, Hashable {
        var name: String
        var type: String
    }

    var primaryKeys: [PrimaryKeyRow]
    var tables: [String: [Column]]
    var indexes: [String: [String]] // table → index names
    var storeUUID: String
    var metadataPlist: Data?
    var modelCache: Data?
    /// SQLite's schema cookie and the schema's SQL when read: a later difference means the file now
    /// holds other tables (a migration in place).
    var schema: Schema

    struct Schema: Sendable, Equatable {
        var version: Int
        var sql: String

        /// The schema as it is now. The cookie is compared first (a header read); the SQL only when the
        /// cookie moved, since it moves on any DDL, even a table created and dropped at once.
        static func read(_ db: Database, unlessVersion known: Schema? = nil) throws -> Schema {
            let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
            if let known, known.version == version { return known }
            let sql = try String.fetchAll(db, sql: "SELECT coalesce(sql, '') FROM sqlite_master ORDER BY type, name").joined(separator: ";\n")
            return Schema(version: version, sql: sql)
        }
    }

    /// History entity numbers are fixed: 16001 CHANGE, 16002 TRANSACTION, 16003 TRANSACTIONSTRING.
    static let historyEntityNumbers = 16001...16003

    /// Whether the store records persistent history, in either layout: the first (macOS 10.13, iOS 11)
    /// keeps author, bundle id, process id and context name inline in `ATRANSACTION`; later ones intern
    /// them in `ATRANSACTIONSTRING`.
    var hasHistory: Bool {
        tables["ATRANSACTION"] != nil && tables["ACHANGE"] != nil
    }

    /// Whether `table` has a column named `column`.
    func has(_ column: String, in table: String) -> Bool {
        tables[table]?.contains { $0.name == column } ?? false
    }

    var entityRows: [PrimaryKeyRow] {
        primaryKeys.filter { !Self.historyEntityNumbers.contains($0.entityNumber) }
    }

    static func read(_ db: Database, path: String) throws -> StoreCatalog {
        var tables: [String: [Column]] = [:]
        var indexes: [String: [String]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')") {
            let checked = row.checked(table: "sqlite_master", path: path)
            guard let type = try checked.string(0, "type"), let name = try checked.string(1, "name"),
                  let table = try checked.string(2, "tbl_name") else { continue }
            if type == "index" { indexes[table, default: []].append(name); continue }
            tables[name] = try Row.fetchAll(db, sql: "SELECT name, type FROM pragma_table_info(?)", arguments: [name]).map { row throws in
                let checked = row.checked(table: name, path: path)
                return Column(name: try checked.string(0, "name") ?? "", type: try checked.string(1, "type") ?? "")
            }
        }
        for required in ["Z_PRIMARYKEY", "Z_METADATA"] where tables[required] == nil {
            throw CoreDataStoreError.notACoreDataStore(path: path, missing: required)
        }
        let primaryKeys = try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { row throws in
            let checked = row.checked(table: "Z_PRIMARYKEY", path: path)
            return PrimaryKeyRow(
                entityNumber: Int(clamping: try checked.integer(0, "Z_ENT") ?? 0), name: try checked.string(1, "Z_NAME") ?? "",
                superNumber: Int(clamping: try checked.integer(2, "Z_SUPER") ?? 0), maxPrimaryKey: try checked.integer(3, "Z_MAX") ?? 0)
        }
        guard let metadata = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1") else {
            throw CoreDataStoreError.unsupportedStore(path: path, detail: "Z_METADATA has no row, so the store has no UUID")
        }
        let checked = metadata.checked(table: "Z_METADATA", path: path)
        guard let uuid = try checked.string(0, "Z_UUID"), !uuid.isEmpty else {
            throw CoreDataStoreError.unsupportedStore(path: path, detail: "Z_METADATA has no store UUID")
        }
        // The UUID becomes the host of every object URI: anything but a UUID could forge URIs or output lines.
        guard uuid.utf8.count == 36, UUID(uuidString: uuid) != nil else {
            throw CoreDataStoreError.unsupportedStore(
                path: path, detail: "Z_METADATA.Z_UUID is \(CheckedRow.describe(uuid.databaseValue)), not a UUID")
        }
        let modelCache: Data? = tables["Z_MODELCACHE"] == nil ? nil : try Row.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")
            .flatMap { row throws in try row.checked(table: "Z_MODELCACHE", path: path).data(0, "Z_CONTENT") }
        return StoreCatalog(primaryKeys: primaryKeys, tables: tables, indexes: indexes, storeUUID: uuid,
                            metadataPlist: try checked.data(1, "Z_PLIST"), modelCache: modelCache, schema: try Schema.read(db))
    }

    /// Matches model entities to `Z_PRIMARYKEY` rows: by name, then by renaming identifier (a renamed
    /// entity keeps its old `Z_NAME`), then by Core Data's numbering for whatever is left.
    func entityNumbers(for model: ManagedObjectModel) -> [String: Int] {
        let rows = entityRows
        var numbers: [String: Int] = [:]
        var taken: Set<Int> = []
        let byName = Dictionary(rows.map { ($0.name, $0.entityNumber) }, uniquingKeysWith: { first, _ in first })
        for entity in model.entities {
            if let number = byName[entity.name] ?? entity.renamingIdentifier.flatMap({ byName[$0] }), !taken.contains(number) {
                numbers[entity.name] = number
                taken.insert(number)
            }
        }
        for (name, number) in model.entityNumbers where numbers[name] == nil && !taken.contains(number) {
            numbers[name] = number
            taken.insert(number)
        }
        return numbers
    }
}
