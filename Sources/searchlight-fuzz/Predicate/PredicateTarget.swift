import Foundation
import GRDB
@testable import SearchIndex

/// Fuzzes the `--where` parser and what it compiles to: every string is a predicate whose SQL SQLite
/// runs against items with attributes of every kind, or a clean error with a position inside the text.
enum PredicateTarget {
    static let database: DatabaseQueue = {
        // The index's own schema (its migrations), so the harness never drifts from what searches query.
        let queue = FuzzDatabase.withTokenizer("SELECT 1")
        do {
            try SearchIndex.migrator.migrate(queue)
            try queue.write { db in
                SearchIndex.registerPredicateFunctions(on: db)
                try db.execute(sql: """
                    INSERT INTO stores (id, uuid, path, token, updated_at) VALUES (1, 'S', '/s', 0, 0);
                    INSERT INTO items (id, uri, store_id, entity, display_name, rank) VALUES (1, 'u1', 1, 'Place', 'Tokyo', 0),
                        (2, 'u2', 1, 'Place', 'São Paulo', 0);
                    INSERT INTO item_attributes VALUES (1, 'population', 1, 3777491, NULL), (1, 'country', 0, NULL, 'JP'),
                        (1, 'updated', 2, 737000000, NULL), (2, 'country', 0, NULL, 'Zürich'), (2, 'name', 0, NULL, 'São Paulo');
                    """)
            }
        } catch {
            fatalError("searchlight-fuzz: cannot create the index schema: \(error)")
        }
        return queue
    }()

    /// Values for any `$VARIABLE` the input uses: numbers, text, quoted digits, a date, predicate syntax.
    static let values = ["1", "x y", "\"7\"", "2024-05-10", "1 OR TRUEPREDICATE", "", "-0", "1e400", "\u{301}"]

    static let target = FuzzTarget(name: "predicate", prepare: { _ = database }) { data in
        let text = String(decoding: data, as: UTF8.self)
        check(text, variables: nil)
        // As a saved search's template: its variables listed, set to every kind of value, attributes renamed.
        guard let names = try? PredicateParser.variables(in: text), !names.isEmpty else { return }
        for value in values { check(text, variables: Dictionary(uniqueKeysWithValues: names.map { ($0, value) })) }
        if let search = try? SavedSearch(name: "fuzz", query: text, filter: text) {
            guard Set(search.variables).isSuperset(of: names) else { fatalError("variables of \(text.debugDescription) lost: \(search.variables)") }
            _ = try? search.request(variables: Dictionary(uniqueKeysWithValues: search.variables.map { ($0, "1") }))
        }
        if let renamed = try? PredicateParser.renamingAttributes(in: text, ["population": "p", "country": "country_code"]),
           (try? PredicateParser.variables(in: renamed)) != names {
            fatalError("renaming attributes of \(text.debugDescription) changed its variables: \(renamed.debugDescription)")
        }
    }

    static func check(_ text: String, variables: [String: String]?) {
        let predicate: FilterPredicate
        switch Result(catching: { () throws(SearchIndexError) in try PredicateParser.parse(text, variables: variables) }) {
        case .success(let parsed):
            predicate = parsed
        case .failure(.invalidPredicate(_, let position)):
            guard position >= 1, position <= text.unicodeScalars.count + 1 else {
                fatalError("error position \(position) outside the \(text.unicodeScalars.count)-character predicate \(text.debugDescription)")
            }
            return
        case .failure(let error):
            fatalError("unexpected error \(error)")
        }
        // Both forms (an item-set and a per-item probe) must run and agree.
        var counts: [Int] = []
        for correlated in [false, true] {
            let (sql, arguments) = predicate.sql(correlated: correlated)
            do {
                counts.append(try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items i WHERE \(sql)", arguments: arguments) } ?? -1)
            } catch {
                fatalError("SQLite refuses the compiled predicate of \(text.debugDescription): \(sql): \(error)")
            }
        }
        // The probe reading the item's id from the driving table's own column (FTS5's rowid, the R-tree's id),
        // through every NOT, AND, OR and `!=` of the predicate.
        let probe = predicate.sql(correlated: true, itemID: "driving.item")
        do {
            counts.append(try database.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM (SELECT id AS item FROM items) driving WHERE \(probe.sql)", arguments: probe.arguments)
            } ?? -1)
        } catch {
            fatalError("SQLite refuses the probe of \(text.debugDescription) on another table: \(probe.sql): \(error)")
        }
        if Set(counts).count != 1 { fatalError("the three forms of \(text.debugDescription) disagree: \(counts)") }
        // The filter decided in Swift (the PostgreSQL backend's check) keeps exactly the items SQLite keeps.
        let (sql, arguments) = predicate.sql(correlated: false)
        let kept: [Int64]
        do {
            kept = try database.read { db in try Int64.fetchAll(db, sql: "SELECT i.id FROM items i WHERE \(sql) ORDER BY i.id", arguments: arguments) }
        } catch {
            fatalError("SQLite refuses the compiled predicate of \(text.debugDescription): \(sql): \(error)")
        }
        let decided = attributes.filter { predicate.isSatisfied(by: $0.value) }.map(\.key).sorted()
        if kept != decided { fatalError("Swift keeps \(decided), SQLite \(kept) for \(text.debugDescription)") }
    }

    /// The items' attributes as the schema above holds them.
    static let attributes: [Int64: [String: [FilterValue]]] = [
        1: ["population": [.number(3_777_491)], "country": [.string("JP")], "updated": [.date(Date(timeIntervalSinceReferenceDate: 737_000_000))]],
        2: ["country": [.string("Zürich")], "name": [.string("São Paulo")]],
    ]
}
