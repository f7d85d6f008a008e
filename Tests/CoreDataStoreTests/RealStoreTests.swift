import CoreDataStoreWriter
@testable import CoreDataStore
import Foundation
import GRDB
import Testing

/// Every real Apple-written store loads, lists its history and resolves every object to exactly what an
/// independent SQL read of its row says, without a byte of the store or its companions changing.
@Suite("Real Apple-written stores", .enabled(if: Fixtures.realStoresAvailable, Comment(rawValue: Fixtures.realStoresSkipMessage)))
struct RealStoreTests {
    let directory = Fixtures.temporaryDirectory()

    /// A copy of the fixture's folder and the store path in it.
    func copy(_ store: RealStore) throws -> (folder: URL, path: String) {
        let folder = try Fixtures.copyRealStore(store, to: directory)
        return (folder, folder.appendingPathComponent(store.file).path)
    }

    @Test("the model loads, from the store's Z_MODELCACHE or the model file it ships", arguments: Fixtures.realStoreList)
    func loadsModel(store: RealStore) throws {
        let (folder, path) = try copy(store)
        let opened = try PersistentStore(path: path)
        #expect(opened.metadata.storeUUID.count == 36)
        if store.modelFile == nil {
            #expect(opened.model.source == .modelCache)
            // Every entity the store records a version hash for is in the decoded model.
            #expect(Set(opened.model.entities.map(\.name)) == Set(opened.metadata.versionHashes.keys))
        } else {
            #expect(opened.model.source == .schema)
            #expect(opened.notes.contains(.modelInferred))
            let modelPath = folder.appendingPathComponent(store.modelFile ?? "").path
            let withModel = try PersistentStore(path: path, modelPath: modelPath)
            #expect(withModel.model.source == .modelFile(path: modelPath))
        }
        #expect(opened.hasHistory == store.hasHistory)
    }

    @Test("history lists every transaction and change, in either layout", arguments: Fixtures.realStoreList.filter(\.hasHistory))
    func history(store: RealStore) throws {
        let (_, path) = try copy(store)
        let opened = try PersistentStore(path: path)
        let raw = try DatabaseQueue(path: path, configuration: Self.readOnly)
        let (transactionCount, changeCount, maxTransaction) = try raw.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ATRANSACTION") ?? 0,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ACHANGE") ?? 0,
             try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ATRANSACTION") ?? 0)
        }
        var token: Int64 = 0
        var transactions = 0, changes = 0, withBundle = 0
        var types: [HistoryChange.ChangeType: Int] = [:]
        while true {
            let batch = try opened.transactions(after: token, limit: 200)
            guard let last = batch.last else { break }
            for transaction in batch {
                #expect(transaction.number > token)
                token = transaction.number
                transactions += 1
                changes += transaction.changes.count
                if transaction.bundleID != nil { withBundle += 1 }
                for change in transaction.changes {
                    types[change.type, default: 0] += 1
                    #expect(opened.model.entity(named: change.objectID.entityName) != nil, "\(change.objectID)")
                }
            }
            token = last.number
        }
        #expect(transactions == transactionCount)
        #expect(changes == changeCount)
        #expect(token == maxTransaction)
        // Every transaction of these stores names the process that saved it, interned or inline.
        #expect(withBundle == transactionCount)
        let bounds = try opened.historyBounds()
        #expect(bounds.newest >= maxTransaction)
        #expect(bounds.canResume(from: 0) == (bounds.oldest.map { $0 <= 1 } ?? false))
        _ = types
    }

    @Test("every object resolves to what an independent SQL read of its row says, and no file changes", arguments: Fixtures.realStoreList)
    func resolvesEveryObject(store: RealStore) throws {
        let (folder, path) = try copy(store)
        let before = try Fixtures.fingerprint(of: folder)
        var compared = Comparison()
        do {
            let opened = try PersistentStore(path: path, modelPath: store.modelFile.map { folder.appendingPathComponent($0).path })
            // Immutable when at rest (an ordinary reader would create -wal and -shm beside it); rows in a -wal
            // need an ordinary reader.
            let atRest = !FileManager.default.fileExists(atPath: path + "-wal")
            let raw = try DatabaseQueue(path: atRest ? "file:\(path)?immutable=1" : path, configuration: Self.readOnly)
            try raw.read { db in try compared.run(store: opened, db: db) }
        }
        #expect(compared.objects > 0)
        #expect(compared.mismatches.isEmpty, "\(compared.mismatches.prefix(10))")
        // Most values must actually have been compared, not skipped.
        #expect(compared.values > compared.objects)
        #expect(try Fixtures.fingerprint(of: folder) == before)
    }

    @Test("Photos 10.15: join tables, ordered many-to-many, reflexive relationships and collision suffixes are read from the schema")
    func photosJoinTables() throws {
        let store = try #require(Fixtures.realStoreList.first { $0.folder.contains("Photos") })
        let (_, path) = try copy(store)
        let opened = try PersistentStore(path: path)
        let model = opened.model
        #expect(opened.layout.unresolvedRelationships.isEmpty)
        #expect(opened.layout.storage(of: "assets", entity: "Album", model: model)
            == .toManyViaJoin(table: "Z_26ASSETS", column: "Z_26ALBUMS", otherColumn: "Z_34ASSETS", orderColumn: "Z_FOK_34ASSETS"))
        #expect(opened.layout.storage(of: "albums", entity: "Asset", model: model)
            == .toManyViaJoin(table: "Z_26ASSETS", column: "Z_34ASSETS", otherColumn: "Z_26ALBUMS", orderColumn: nil))
        #expect(opened.layout.storage(of: "mergeCandidates", entity: "Person", model: model)
            == .toManyViaJoin(table: "Z_45MERGECANDIDATES", column: "Z_45MERGECANDIDATES", otherColumn: "REFLEXIVE", orderColumn: nil))
        #expect(opened.layout.storage(of: "representativeAssets", entity: "Suggestion", model: model)
            == .toManyViaJoin(table: "Z_34SUGGESTIONSBEINGREPRESENTATIVEASSETS", column: "Z_52SUGGESTIONSBEINGREPRESENTATIVEASSETS",
                              otherColumn: "Z_34REPRESENTATIVEASSETS1", orderColumn: nil))

        // An album's assets come back in the order Z_FOK_34ASSETS gives them.
        let raw = try DatabaseQueue(path: path, configuration: Self.readOnly)
        let expected = try raw.read { db in
            try Int64.fetchAll(db, sql: "SELECT Z_34ASSETS FROM Z_26ASSETS WHERE Z_26ALBUMS = 5 ORDER BY Z_FOK_34ASSETS")
        }
        let album = try #require(try opened.read { try $0.objects(ofEntity: "Album", afterPrimaryKey: 4, limit: 1) }.first)
        #expect(album.objectID.primaryKey == 5)
        #expect(album.toMany["assets"]?.map(\.primaryKey) == expected)
        #expect(expected.count >= 2)
        // A reflexive relationship lists each side of a pair from either end.
        let person = try #require(try opened.read { try $0.objects(ofEntity: "Person", afterPrimaryKey: 13, limit: 1) }.first)
        #expect(person.toMany["mergeCandidates"]?.map(\.primaryKey).contains(3) == true)
    }

    @Test("macOS 10.13: the first history layout, strings inline, no ATRANSACTIONSTRING")
    func firstHistoryLayout() throws {
        let store = try #require(Fixtures.realStoreList.first { $0.folder.contains("knowledgec") })
        let (_, path) = try copy(store)
        let opened = try PersistentStore(path: path)
        #expect(opened.catalog.tables["ATRANSACTIONSTRING"] == nil)
        let first = try #require(try opened.transactions(after: 0, limit: 1).first)
        #expect(first.number == 1)
        #expect(first.bundleID == "com.apple.coreduetd")
        #expect(first.processID == "coreduetd")
        #expect(first.timestamp == Date(timeIntervalSinceReferenceDate: 545433821.127018))
        #expect(first.changes.map(\.type) == [.insert])
    }

    @Test("tombstones: ZTOMBSTONE<n> holds the n-th attribute marked 'preserve after deletion' (NSFlagsKey 0x10), inherited first, in its own encoding",
          arguments: [("log2timeline__plaso__macos_knowledgec-10.13", 1_014), ("log2timeline__plaso__ios_RMAdminStore-Local", 296),
                      ("openhouse__osxphotos__Photos-10.15.7", 68)])
    func tombstones(folder: String, values expected: Int) throws {
        let store = try #require(Fixtures.realStoreList.first { $0.folder == folder })
        let (_, path) = try copy(store)
        let opened = try PersistentStore(path: path)
        var values = 0, checked = 0
        var token: Int64 = 0
        while case let batch = try opened.transactions(after: token, limit: 500), let last = batch.last {
            for change in batch.flatMap(\.changes) where change.type == .delete {
                let attributes = opened.model.tombstoneAttributes(of: change.objectID.entityName)
                for attribute in attributes {
                    guard let value = change.tombstone?[attribute.name], value != .null else { continue }
                    values += 1
                    // Each value has the storage its attribute's own column would have: a misplaced column shows
                    // up as text where a Boolean belongs, or the reverse.
                    switch (attribute.type, value) {
                    case (.string, .string), (.uuid, .uuid), (.boolean, .boolean), (.date, .date), (.uri, .uri),
                         (.integer16, .integer), (.integer32, .integer), (.integer64, .integer), (.double, .double), (.binaryData, .binary):
                        checked += 1
                    default:
                        Issue.record("\(change.objectID).\(attribute.name) (\(attribute.type)) tombstone holds \(value)")
                    }
                }
            }
            token = last.number
        }
        #expect(values == expected)
        #expect(checked == values)
        if folder.contains("knowledgec") {
            let first = try #require(try opened.transactions(after: 183, limit: 1).first?.changes.first)
            #expect(opened.model.tombstoneAttributes(of: "Event").map(\.name) == ["uuid", "shouldSync"])
            #expect(first.tombstone?["uuid"] == .string("D9516B99-6DF8-45E1-B751-C38ACBC6ED89"))
            #expect(first.tombstone?["shouldSync"] == .boolean(false))
        }
    }

    @Test("ZCOLUMNS: every update bitmap of the real stores is as long as the entity's slots, with no bit beyond them, and a one-to-many bit is matched by a change on its other side",
          arguments: ["log2timeline__plaso__ios_RMAdminStore-Local", "log2timeline__plaso__macos_knowledgec-10.13", "openhouse__osxphotos__Photos-10.15.7"])
    func updatedColumns(folder: String) throws {
        let store = try #require(Fixtures.realStoreList.first { $0.folder == folder })
        let (_, path) = try copy(store)
        let opened = try PersistentStore(path: path)
        let model = opened.model
        let raw = try DatabaseQueue(path: "file:\(path)?immutable=1", configuration: Self.readOnly)
        let rows = try raw.read { db in
            try Row.fetchAll(db, sql: "SELECT ZENTITY, ZCOLUMNS FROM ACHANGE WHERE ZCHANGETYPE = 1 AND ZCOLUMNS IS NOT NULL")
        }
        var lengthOK = 0, inRange = 0
        for row in rows {
            guard let entity = opened.entityName(forNumber: row[0]) else { continue }
            let bitmap: Data = row[1]
            let slots = model.historyColumnOrder(of: entity).count
            if bitmap.count == (slots + 7) / 8 { lengthOK += 1 }
            let bytes = [UInt8](bitmap)
            let beyond = (slots..<(bytes.count * 8)).contains { (bit: Int) -> Bool in
                let mask = UInt8(0x80) >> UInt8(bit % 8)
                return bytes[bit / 8] & mask != 0
            }
            if !beyond { inRange += 1 }
        }
        #expect(rows.count > 20)
        #expect(lengthOK == rows.count)
        #expect(inRange == rows.count)

        // A one-to-many relationship changes only when a member's to-one changes: some object of the
        // destination entity must change in the same transaction.
        let tracked = Set(try raw.read { db in try Int.fetchAll(db, sql: "SELECT DISTINCT ZENTITY FROM ACHANGE") }.compactMap(opened.entityName(forNumber:)))
        var matched = 0, unmatched = 0
        var token: Int64 = 0
        while case let batch = try opened.transactions(after: token, limit: 500), let last = batch.last {
            for transaction in batch {
                let changedKinds = Set(transaction.changes.map(\.objectID.entityName))
                for change in transaction.changes {
                    for name in change.updatedProperties ?? [] {
                        guard let relationship = model.relationship(name, of: change.objectID.entityName), relationship.isToMany,
                              model.inverse(of: relationship)?.isToMany == false else { continue }
                        // Photos keeps some entities out of history (AssetAnalysisState, PersonReference): no counterpart to find.
                        guard tracked.contains(where: { model.isKind($0, of: relationship.destinationEntityName) }) else { continue }
                        if changedKinds.contains(where: { model.isKind($0, of: relationship.destinationEntityName) }) { matched += 1 } else { unmatched += 1 }
                    }
                }
            }
            token = last.number
        }
        #expect(matched > 0)
        // Photos rewrites Folder 2's childCollections three times with no member changing (no-op writes).
        #expect(unmatched <= (folder.contains("Photos") ? 3 : 0), "\(matched) matched, \(unmatched) not")
    }

    @Test("the to-many order uses CFString's hash, as Foundation computes it")
    func cfStringHash() {
        #expect(HashTableOrder.hash("assets") == 8_840_438_294_648_025)
        #expect(HashTableOrder.hash("albums") == 8_838_434_682_264_330)
        #expect(HashTableOrder.hash("mergeCandidates") == 6_998_287_043_274_407_695)
    }

    static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        return configuration
    }
}

/// Compares every object the reader returns with the row SQLite returns for it, decoded independently.
private struct Comparison {
    var objects = 0
    var values = 0
    var mismatches: [String] = []

    mutating func run(store: PersistentStore, db: Database) throws {
        let model = store.model
        let numbers = store.layout.entityNumbers
        // (root table, primary key) → every destination key the reader lists in any to-many relationship.
        var toManyKeys: [String: Set<Int64>] = [:]
        var toOneKeys: [(owner: String, inverse: String, destinationTable: String, key: Int64)] = []
        for entity in model.entities where !entity.isAbstract {
            guard let number = numbers[entity.name] else { continue }
            let table = "Z" + model.rootEntityName(of: entity.name).uppercased()
            let columns = Set(try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table]))
            guard !columns.isEmpty else { continue }
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table) WHERE Z_ENT = ? ORDER BY Z_PK", arguments: [number])
            for start in stride(from: 0, to: rows.count, by: 500) {
                let chunk = rows[start..<min(start + 500, rows.count)]
                let ids = chunk.map { store.objectID(entity: entity.name, primaryKey: $0["Z_PK"]) }
                let snapshots = try store.objects(ids)
                for row in chunk {
                    let id = store.objectID(entity: entity.name, primaryKey: row["Z_PK"])
                    guard let snapshot = snapshots[id] else { mismatches.append("\(id): not resolved"); continue }
                    objects += 1
                    if snapshot.version != (row["Z_OPT"] as Int64? ?? 0) { mismatches.append("\(id): Z_OPT") }
                    for attribute in model.allAttributes(of: entity.name) where attribute.isStored && attribute.type != .composite {
                        let candidates = Self.candidates("Z" + attribute.name.uppercased(), in: columns)
                        let actual = snapshot.attributes[attribute.name] ?? .null
                        if candidates.count == 1, let column = candidates.first {
                            guard let expected = Self.decode(row[column] as DatabaseValue, attribute.type) else { continue }
                            values += 1
                            if !Self.same(actual, expected) { mismatches.append("\(id).\(attribute.name): \(actual) ≠ \(expected)") }
                        } else if !candidates.isEmpty {
                            values += 1
                            let matching = candidates.filter { column in
                                Self.decode(row[column] as DatabaseValue, attribute.type).map { Self.same(actual, $0) } ?? false
                            }
                            narrow("\(entity.name).\(attribute.name)", to: matching)
                        }
                    }
                    for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
                        if relationship.isToMany {
                            for destination in snapshot.toMany[relationship.name] ?? [] {
                                toManyKeys[table + "/\(id.primaryKey)", default: []].insert(destination.primaryKey)
                            }
                            continue
                        }
                        let candidates = Self.candidates("Z" + relationship.name.uppercased(), in: columns)
                        guard let column = candidates.first else { continue }
                        values += 1
                        let actualKey = snapshot.toOne[relationship.name]?.primaryKey
                        if candidates.count > 1 {
                            narrow("\(entity.name).\(relationship.name)", to: candidates.filter { (row[$0] as Int64?) == actualKey })
                        } else if actualKey != row[column] as Int64? {
                            mismatches.append("\(id).\(relationship.name): \(String(describing: actualKey)) ≠ \(String(describing: row[column] as Int64?))")
                        }
                        let key = actualKey
                        if let key, let inverse = model.inverse(of: relationship), inverse.isToMany {
                            let destinationTable = "Z" + model.rootEntityName(of: relationship.destinationEntityName).uppercased()
                            toOneKeys.append((table + "/\(id.primaryKey)", inverse.name, destinationTable, key))
                        }
                    }
                }
            }
        }
        // A property whose column name collides across sibling entities (`ZFOOTER`, `ZFOOTER1`) must
        // match one and the same candidate column on every row.
        for (property, columns) in ambiguous where columns.isEmpty {
            mismatches.append("\(property): no one column of its candidates holds its values on every row")
        }
        // A to-one key pointing at an object means that object's inverse to-many lists the owner.
        for link in toOneKeys {
            values += 1
            let ownerKey = Int64(link.owner.split(separator: "/").last ?? "") ?? -1
            if toManyKeys[link.destinationTable + "/\(link.key)"]?.contains(ownerKey) != true {
                mismatches.append("\(link.destinationTable)/p\(link.key).\(link.inverse) lacks \(link.owner)")
            }
        }
        // Every row of every join table shows up from both ends. Tables are found in sqlite_master and
        // their sides by the entity number in each key column's name: no layout rule is used.
        let entityTables = Dictionary(numbers.map { ($0.value, "Z" + model.rootEntityName(of: $0.key).uppercased()) }, uniquingKeysWith: { a, _ in a })
        for join in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z_[0-9]*'") {
            let keys = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [join]).filter { !$0.hasPrefix("Z_FOK_") }
            guard keys.count == 2 else { mismatches.append("\(join): \(keys.count) key columns"); continue }
            func table(of column: String) -> String? {
                column == "REFLEXIVE" ? table(of: keys[0]) : Int(column.dropFirst(2).prefix { $0.isNumber }).flatMap { entityTables[$0] }
            }
            guard let left = table(of: keys[0]), let right = table(of: keys[1]) else { mismatches.append("\(join): sides"); continue }
            for row in try Row.fetchAll(db, sql: "SELECT \(keys[0]), \(keys[1]) FROM \(join)") {
                let a: Int64 = row[0], b: Int64 = row[1]
                values += 2
                if toManyKeys[left + "/\(a)"]?.contains(b) != true { mismatches.append("\(join): \(left)/p\(a) lacks p\(b)") }
                if toManyKeys[right + "/\(b)"]?.contains(a) != true { mismatches.append("\(join): \(right)/p\(b) lacks p\(a)") }
            }
        }
    }

    /// Properties whose column is one of several name-alike candidates, and the candidates still consistent.
    var ambiguous: [String: Set<String>] = [:]

    mutating func narrow(_ property: String, to matching: [String]) {
        ambiguous[property] = ambiguous[property].map { $0.intersection(matching) } ?? Set(matching)
    }

    /// The column `stem`, and `stem1`, `stem2`… where Core Data numbered colliding names.
    static func candidates(_ stem: String, in columns: Set<String>) -> [String] {
        ([stem] + (1...9).map { stem + String($0) }).filter(columns.contains)
    }

    /// SQLite's value as Core Data's type means it, or nil when the storage class is not the usual one
    /// for the type (those are the reader's tolerance rules, not compared here).
    static func decode(_ value: DatabaseValue, _ type: AttributeType) -> AttributeValue? {
        switch (value.storage, type) {
        case (.null, _): .null
        case (.int64(let n), .integer16), (.int64(let n), .integer32), (.int64(let n), .integer64): .integer(n)
        case (.int64(let n), .boolean): .boolean(n != 0)
        case (.int64(let n), .double), (.int64(let n), .float): .double(Double(n))
        case (.double(let d), .double), (.double(let d), .float): .double(d)
        case (.double(let d), .decimal): .decimal(d)
        case (.int64(let n), .decimal): .decimal(Double(n))
        case (.double(let d), .date): .date(Date(timeIntervalSinceReferenceDate: d))
        case (.int64(let n), .date): .date(Date(timeIntervalSinceReferenceDate: Double(n)))
        case (.string(let s), .string): .string(s)
        case (.string(let s), .uri): .uri(s)
        case (.blob(let b), .uuid) where b.count == 16:
            .uuid(UUID(uuid: (b[b.startIndex], b[b.startIndex + 1], b[b.startIndex + 2], b[b.startIndex + 3], b[b.startIndex + 4],
                              b[b.startIndex + 5], b[b.startIndex + 6], b[b.startIndex + 7], b[b.startIndex + 8], b[b.startIndex + 9],
                              b[b.startIndex + 10], b[b.startIndex + 11], b[b.startIndex + 12], b[b.startIndex + 13],
                              b[b.startIndex + 14], b[b.startIndex + 15])))
        case (.blob(let b), .binaryData): .binary(b)
        case (.blob(let b), .transformable): .transformable(b)
        default: nil
        }
    }

    static func same(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        if case .double(let x) = a, case .double(let y) = b, x.isNaN && y.isNaN { return true }
        return a == b
    }
}

/// A store at rest is read without creating files beside it, yet a reader holding it sees an app's
/// saves as soon as the app opens it, and after the app closed it again.
@Suite("Stores at rest", .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
struct StoreAtRestTests {
    let directory = Fixtures.temporaryDirectory()

    func books(_ store: PersistentStore) throws -> Int {
        try store.read { try $0.count(ofEntity: "Author") }
    }

    @Test("no -wal or -shm appears; saves made while the app has it open, and after it closed it, are seen")
    func atRest() throws {
        let path = try Fixtures.copyStore("SampleModel2_V1", to: directory)
        let store = try PersistentStore(path: path)
        #expect(store.access == .atRest)
        let before = try books(store)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-shm"))

        // The app opens the store, saves and closes it between two reads: no companions are left, but
        // its checkpoint wrote the file.
        do {
            let app = try StoreWriter(path: path)
            var save = SaveRequest()
            save.insert("Author", attributes: ["alias": .string("saved and closed"), "age": .integer(1)])
            _ = try app.save(save)
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(try books(store) == before + 1)

        // The app opens it and keeps it open: its saves are seen while it has it.
        let app = try StoreWriter(path: path)
        var save = SaveRequest()
        save.insert("Author", attributes: ["alias": .string("saved while open"), "age": .integer(2)])
        _ = try app.save(save)
        #expect(try books(store) == before + 2)
    }

    @Test("a store reached through a symbolic link is live when the real file's -wal is: the app's saves are read, not a stale main file")
    func throughLink() throws {
        let path = try Fixtures.copyStore("SampleModel2_V1", to: directory)
        let app = try StoreWriter(path: path)
        var save = SaveRequest()
        save.insert("Author", attributes: ["alias": .string("in the wal"), "age": .integer(3)])
        _ = try app.save(save)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let link = directory.appendingPathComponent("Link-\(UUID().uuidString).sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let direct = try PersistentStore(path: path)
        let linked = try PersistentStore(path: link)
        #expect(linked.access == .shared)
        #expect(try books(linked) == (try books(direct)))
        _ = app
    }

    @Test("the data version changes with a save that makes the reader open the store again, read first or not")
    func dataVersionAcrossReopening() throws {
        for (readsFirst, closes) in [(false, false), (true, false), (false, true), (true, true)] {
            let path = try Fixtures.copyStore("SampleModel2_V1", to: directory)
            let store = try PersistentStore(path: path)
            let version = try store.dataVersion()
            // The app saves, and keeps the store open or closes it (its checkpoint leaves no companions).
            var app: StoreWriter? = try StoreWriter(path: path)
            var save = SaveRequest()
            save.insert("Author", attributes: ["alias": .string("saved"), "age": .integer(1)])
            _ = try app?.save(save)
            if closes { app = nil }
            // A read in between (a follower's other thread) opens the store again before the version is asked.
            if readsFirst { _ = try books(store) }
            #expect(try store.dataVersion() != version, "read first: \(readsFirst), app closed: \(closes)")
            _ = app
        }
    }
}
