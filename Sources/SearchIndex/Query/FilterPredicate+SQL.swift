import Foundation
import GRDB
import Synchronization

extension FilterPredicate {
    /// The predicate as an SQL condition on the items table (aliased `i`), with its arguments: each
    /// comparison a set of item ids read from the attribute rows through the `(name, value)` indexes, or,
    /// `correlated`, a probe of the item whose id the column `itemID` holds.
    func sql(correlated: Bool = false, itemID: String = "i.id") -> (sql: String, arguments: StatementArguments) {
        switch self {
        case .constant(let value):
            return (value ? "1" : "0", [])
        case .not(let inner):
            let (sql, arguments) = inner.sql(correlated: correlated, itemID: itemID)
            return ("NOT (\(sql))", arguments)
        case .and(let parts), .or(let parts):
            let compiled = parts.map { $0.sql(correlated: correlated, itemID: itemID) }
            let joiner = if case .and = self { " AND " } else { " OR " }
            return ("(" + compiled.map(\.sql).joined(separator: joiner) + ")", compiled.reduce(into: StatementArguments()) { $0 += $1.arguments })
        case .comparison(let attribute, let comparison, let options, let values):
            // `!=` is "not equal": an item without the attribute, or whose values all differ, passes — as
            // `nil != "JP"` is true for NSPredicate.
            if comparison == .notEqual {
                return FilterPredicate.not(.comparison(attribute: attribute, operator: .equal, options: options, values: values)).sql(correlated: correlated, itemID: itemID)
            }
            // Two forms of one test. Uncorrelated, SQLite reads the matching attribute rows once through
            // the (name, value) indexes into a set: right when the filter drives (a correlated EXISTS per
            // item took 10 s for `population > 1000000` over 34,258 items). Correlated, each item read
            // is probed through the (item, name) index: right when FTS5, the R-tree or an ordered walk
            // drives (building the set of `population > 1000` for every search cost 100+ ms).
            let (set, probe) = ("i.id IN (" + Self.itemsNamed,
                                // INDEXED BY: without statistics SQLite preferred the (name, number) range for
                                // the probe, scanning every matching row for every item (2 s).
                                "EXISTS (SELECT 1 FROM item_attributes a INDEXED BY item_attributes_by_item WHERE a.item_id = \(itemID) AND a.name = ?")
            if values == [.null] {
                return ((correlated ? "NOT " + probe : set.replacingOccurrences(of: "i.id IN", with: "i.id NOT IN")) + ")", [attribute])
            }
            if !correlated, comparison == .matches, case .string(let pattern)? = values.first {
                return (Self.matchingItems(options: options), [attribute, attribute, attribute, pattern, attribute, pattern])
            }
            let (condition, arguments) = Self.condition(comparison, options: options, values: values)
            return ((correlated ? probe : set) + " AND (\(condition)))", [attribute] + arguments)
        }
    }

    /// The ids of the items holding an attribute (its name the argument), before the condition on its rows.
    private static let itemsNamed = "SELECT a.item_id FROM item_attributes a WHERE a.name = ?"

    /// The SQL text an attribute value is compared as: itself, or folded for `[c]`/`[d]`.
    private static func text(_ options: Options) -> String {
        options.isEmpty ? "a.text" : "searchlight_fold(a.text, \(options.rawValue))"
    }

    /// The ids of the items one comparison of a filter keeps, read through an attribute index: every item the
    /// filter keeps is among them (some may repeat).
    struct DrivingItems {
        /// The statement reading the ids, and its arguments.
        let sql: String, arguments: StatementArguments
        /// For a range, a statement counting its attribute rows from the `(name, number)` index alone, at
        /// most a limit appended to it (`LIMIT n`), with its arguments: an upper bound on the ids (dates and
        /// numbers counted alike). Nil for an equality, whose rows share one value and come in item id order
        /// (``SearchIndex/attributeValueIndexes``), which a sample of the first ones estimates from.
        let count: (sql: String, arguments: StatementArguments)?
    }

    /// The items of the filter's driving comparison: the filter itself, or a part of its top `AND` (an
    /// equality rather than a range). An equality on an unfolded value, or a range of numbers or dates
    /// (`<`, `<=`, `>`, `>=`, `BETWEEN`), whose ids come by value: its rows are counted first. Nil without
    /// such a comparison: folded texts, strings that read as dates (which compare with dates too) and every
    /// other comparison are probed instead.
    func drivingItems() -> DrivingItems? {
        switch self {
        case .and(let parts):
            let driving = parts.compactMap { $0.drivingItems() }
            return driving.first { $0.count == nil } ?? driving.first
        case .comparison(let attribute, let comparison, let options, let values):
            guard options.isEmpty, let value = values.first else { return nil }
            let (condition, arguments) = Self.condition(comparison, options: options, values: values)
            let items = DrivingItems.init(sql:arguments:count:)
            switch (comparison, value) {
            case (.equal, _) where values.count == 1:
                if case .null = value { return nil }
                if case .string(let text) = value, PredicateParser.date(text) != nil { return nil }
                return items(Self.itemsNamed + " AND (\(condition))", [attribute] + arguments, nil)
            case (.less, _), (.lessOrEqual, _), (.greater, _), (.greaterOrEqual, _):
                guard values.count == 1, let bound = Self.number(value) else { return nil }
                return items(Self.itemsNamed + " AND (\(condition))", [attribute] + arguments,
                             ("SELECT count(*) FROM (SELECT 1 FROM item_attributes a WHERE a.name = ? AND a.number \(comparison.rawValue) ?", [attribute, bound]))
            case (.between, _):
                // Both numbers or both dates: a mixed pair keeps nothing, and is probed.
                guard values.count == 2, let low = Self.number(values[0]), let high = Self.number(values[1]),
                      Self.number(values[0], ofKindOf: values[1]) else { return nil }
                return items(Self.itemsNamed + " AND (\(condition))", [attribute] + arguments,
                             ("SELECT count(*) FROM (SELECT 1 FROM item_attributes a WHERE a.name = ? AND a.number BETWEEN ? AND ?", [attribute, low, high]))
            default:
                return nil
            }
        case .constant, .or, .not:
            return nil
        }
    }

    /// A number or a date as the `number` column holds it (a date's seconds since 2001); nil for text and nil.
    private static func number(_ literal: Literal) -> Double? {
        switch literal {
        case .number(let number): number
        case .date(let date): date.timeIntervalSinceReferenceDate
        case .string, .null: nil
        }
    }

    /// Whether two literals are both numbers or both dates.
    private static func number(_ literal: Literal, ofKindOf other: Literal) -> Bool {
        switch (literal, other) {
        case (.number, .number), (.date, .date): true
        default: false
        }
    }

    /// Of an attribute's distinct texts, the most matched one by one: past them, rows are matched.
    package static let mostTextsMatched = 10_000

    /// The items holding a text of an attribute that matches a regular expression (the set form of `MATCHES`),
    /// the expression matched once per distinct text. Its arguments: the attribute's name three times, the
    /// pattern, the name, the pattern.
    ///
    /// The first ``mostTextsMatched`` distinct texts are read one index probe each (a skip-scan of `(name,
    /// text)`) and matched, then rows are found by the texts that match; the rows of the texts past them, if
    /// any, are matched one by one, as a range of the same index. A country or a time zone is held by
    /// thousands of items: matching every row took 1 s for `country MATCHES 'I[TE]'` over 939,632 places,
    /// and 46 ms by texts; an attribute whose texts are all distinct is matched by rows, as before.
    private static func matchingItems(options: Options) -> String {
        """
        i.id IN (
            WITH RECURSIVE texts(text, n) AS (
                SELECT min(text), 1 FROM item_attributes WHERE name = ?
                UNION ALL
                SELECT (SELECT min(b.text) FROM item_attributes b WHERE b.name = ? AND b.text > t.text), t.n + 1
                FROM texts t WHERE t.text IS NOT NULL AND t.n <= \(mostTextsMatched)
            )
            SELECT a.item_id FROM item_attributes a WHERE a.name = ? AND a.kind = 0 AND a.text IN (
                SELECT text FROM texts WHERE text IS NOT NULL AND n <= \(mostTextsMatched) AND searchlight_matches(text, ?, \(options.rawValue)))
            UNION ALL
            SELECT a.item_id FROM item_attributes a WHERE a.name = ? AND a.kind = 0
                AND a.text >= (SELECT text FROM texts WHERE n = \(mostTextsMatched + 1)) AND searchlight_matches(a.text, ?, \(options.rawValue)))
        """
    }

    /// The condition on one attribute row `a` for a comparison.
    private static func condition(_ comparison: Operator, options: Options, values: [Literal]) -> (String, StatementArguments) {
        let column = text(options)
        func fold(_ string: String) -> String { SearchIndex.fold(string, options: options.rawValue) }
        switch comparison {
        case .in:
            let parts = values.map { condition(.equal, options: options, values: [$0]) }
            return (parts.map { "(\($0.0))" }.joined(separator: " OR "), parts.reduce(into: StatementArguments()) { $0 += $1.1 })
        case .between:
            guard values.count == 2 else { return ("0", []) }
            switch (values[0], values[1]) {
            case (.number(let low), .number(let high)): return ("a.kind = 1 AND a.number BETWEEN ? AND ?", [low, high])
            case (.date(let low), .date(let high)):
                return ("a.kind = 2 AND a.number BETWEEN ? AND ?", [low.timeIntervalSinceReferenceDate, high.timeIntervalSinceReferenceDate])
            case (.string(let low), .string(let high)):
                if let from = PredicateParser.date(low), let to = PredicateParser.date(high) {
                    return ("(a.kind = 2 AND a.number BETWEEN ? AND ?) OR (a.kind = 0 AND \(column) BETWEEN ? AND ?)",
                            [from.timeIntervalSinceReferenceDate, to.timeIntervalSinceReferenceDate, fold(low), fold(high)])
                }
                return ("a.kind = 0 AND \(column) BETWEEN ? AND ?", [fold(low), fold(high)])
            default:
                return ("0", [])
            }
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard case .string(let raw) = values.first else { return ("0", []) }
            let value = fold(raw)
            switch comparison {
            case .beginsWith: return ("a.kind = 0 AND substr(\(column), 1, length(?)) = ?", [value, value])
            case .endsWith: return ("a.kind = 0 AND (? = '' OR (length(\(column)) >= length(?) AND substr(\(column), -length(?)) = ?))", [value, value, value, value])
            case .contains: return ("a.kind = 0 AND instr(\(column), ?) > 0", [value])
            case .like: return ("a.kind = 0 AND \(column) GLOB ?", [LikePattern(value).glob])
            default:
                // The raw text and pattern: `[c]` ignores case in the expression (``MatchesPatterns``).
                return ("a.kind = 0 AND searchlight_matches(a.text, ?, \(options.rawValue))", [raw])
            }
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            let symbol = comparison == .notEqual ? "!=" : comparison == .equal ? "=" : comparison.rawValue
            switch values.first {
            case .number(let number)?: return ("a.kind = 1 AND a.number \(symbol) ?", [number])
            case .date(let date)?: return ("a.kind = 2 AND a.number \(symbol) ?", [date.timeIntervalSinceReferenceDate])
            case .string(let raw)?:
                // An ISO-8601 string compared with a date attribute is that date.
                if let date = PredicateParser.date(raw) {
                    return ("(a.kind = 2 AND a.number \(symbol) ?) OR (a.kind = 0 AND \(column) \(symbol) ?)", [date.timeIntervalSinceReferenceDate, fold(raw)])
                }
                return ("a.kind = 0 AND \(column) \(symbol) ?", [fold(raw)])
            case .null?, nil:
                return ("0", [])
            }
        }
    }
}

extension SearchIndex {
    /// Text folded as `[c]` (1), `[d]` (2) or `[cd]` (3) compare it; unchanged for 0.
    package static func fold(_ text: String, options: Int) -> String {
        var folding: String.CompareOptions = []
        if options & FilterPredicate.Options.caseInsensitive.rawValue != 0 { folding.insert(.caseInsensitive) }
        if options & FilterPredicate.Options.diacriticInsensitive.rawValue != 0 { folding.insert(.diacriticInsensitive) }
        return folding.isEmpty ? text : text.folding(options: folding, locale: nil)
    }

    /// Registers `searchlight_fold(text, options)` and `searchlight_matches(text, pattern, options)` (a whole-string
    /// regular-expression match, as MATCHES is), used by filter predicates.
    static func registerPredicateFunctions(on db: Database) {
        db.add(function: DatabaseFunction("searchlight_fold", argumentCount: 2, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0].databaseValue) else { return nil }
            return fold(text, options: Int.fromDatabaseValue(values[1].databaseValue) ?? 0)
        })
        // The connection's compiled patterns. A connection runs one statement at a time, so the lock is
        // never waited on; it makes the cache shareable with the function SQLite calls.
        let patterns = Mutex(MatchesPatterns())
        db.add(function: DatabaseFunction("searchlight_matches", argumentCount: 3, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0].databaseValue),
                  let pattern = String.fromDatabaseValue(values[1].databaseValue) else { return false }
            let options = Int.fromDatabaseValue(values[2].databaseValue) ?? 0
            return patterns.withLock { $0.wholeMatch(text, pattern: pattern, options: options) }
        })
    }
}
