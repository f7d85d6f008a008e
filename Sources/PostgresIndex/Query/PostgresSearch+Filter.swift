#if PostgreSQL
import Foundation
import PostgresNIO
import SearchIndex

extension PostgresSearch {
    /// A `MATCHES` comparison: the attribute, the pattern, and the `[c]`/`[d]` folding it matches after.
    struct MatchesKey: Hashable {
        var attribute: String
        var options: Int
        var pattern: String
    }

    /// For each `MATCHES` comparison in the filter, the texts of its attribute that match, when the
    /// attribute has at most `mostTexts` distinct texts (as many as SQLite matches one by one,
    /// ``FilterPredicate/mostTextsMatched``); past them, every row read is checked in Swift.
    ///
    /// PostgreSQL's regular expressions are not Swift's, so each distinct text is read (a skip-scan of the
    /// `(name, text)` index, one probe per text) and matched here. A time zone or a country is held by
    /// thousands of items: matching each row read took 4 s for the Corpus's 34,007 places in a debug build.
    /// An attribute found past the limit is remembered (``PostgresIndex/attributesPastTextLimit``), so that
    /// its texts are not read again by every search only to be dropped.
    ///
    /// The texts are read in a statement of their own, before the search's: a text written by a batch that
    /// commits in between is not among them, so that search misses its items (or, under `NOT`, keeps them);
    /// the next one decides them. A total counted apart from the rows may differ from them by such a batch too.
    static func matchedTexts(in predicate: FilterPredicate?, index: PostgresIndex, log: StatementLog?,
                             mostTexts: Int = FilterPredicate.mostTextsMatched) async throws(PostgresIndexError) -> [MatchesKey: [String]] {
        var keys: [MatchesKey] = []
        func collect(_ predicate: FilterPredicate) {
            switch predicate {
            case .constant: break
            case .not(let inner): collect(inner)
            case .and(let parts), .or(let parts): parts.forEach(collect)
            case .comparison(let attribute, .matches, let options, let values):
                if case .string(let pattern)? = values.first { keys.append(MatchesKey(attribute: attribute, options: options.rawValue, pattern: pattern)) }
            case .comparison: break
            }
        }
        if let predicate { collect(predicate) }
        var matched: [MatchesKey: [String]] = [:]
        var textsByAttribute: [String: [String]] = [:]
        var patterns = MatchesPatterns()
        for key in keys where matched[key] == nil {
            let attribute = key.attribute
            if textsByAttribute[attribute] == nil {
                // Found past the limit by an earlier search: its rows are checked in Swift.
                if let limit = index.attributesPastTextLimit.withLock({ $0[attribute] }), limit >= mostTexts { continue }
                var parameters = StatementParameters()
                let name = parameters.add(ItemRow.withoutNUL(attribute)), most = parameters.add(Int64(mostTexts))
                let sql = """
                    WITH RECURSIVE texts(text, n) AS (
                        (SELECT text, 1 FROM searchlight_attributes WHERE name = \(name) AND text IS NOT NULL ORDER BY text LIMIT 1)
                        UNION ALL
                        SELECT (SELECT a.text FROM searchlight_attributes a WHERE a.name = \(name) AND a.text IS NOT NULL AND a.text > t.text ORDER BY a.text LIMIT 1), t.n + 1
                        FROM texts t WHERE t.text IS NOT NULL AND t.n <= \(most)
                    )
                    SELECT text FROM texts WHERE text IS NOT NULL
                    """
                log?.record(.init(sql: sql, bindings: parameters.bindings, arguments: parameters.arguments))
                let texts = try await index.rows(sql, parameters.bindings).map { row throws(PostgresIndexError) in try PostgresIndex.decode(row, as: String.self) }
                guard texts.count <= mostTexts else {
                    index.attributesPastTextLimit.withLock { $0[attribute] = max($0[attribute] ?? 0, mostTexts) }
                    continue
                }
                textsByAttribute[attribute] = texts
            }
            matched[key] = textsByAttribute[attribute]?.filter { patterns.wholeMatch($0, pattern: key.pattern, options: key.options) }
        }
        return matched
    }

    /// The filter as an SQL condition on the items row `i`, read through `searchlight_attributes`, and
    /// whether it decides the filter exactly.
    ///
    /// The condition always keeps every item the filter keeps (it may keep more). Every comparison runs
    /// in PostgreSQL as in SQLite (numbers and dates; text in byte order, folded by the writer for `[c]`,
    /// `[d]` and `[cd]`) but `MATCHES`, whose regular expressions are Swift's: it is decided by the texts
    /// found to match (`matched`, from ``matchedTexts(in:index:log:mostTexts:)``), or, for an attribute with too many
    /// texts, only narrows down to items with a text value of the attribute, the rows kept being checked in
    /// Swift (``FilterPredicate/isSatisfied(by:patterns:)``). A `NOT` of an inexact part narrows nothing.
    static func condition(_ predicate: FilterPredicate, matched: [MatchesKey: [String]], parameters: inout StatementParameters) -> (sql: String, exact: Bool) {
        switch predicate {
        case .constant(let value):
            return (value ? "TRUE" : "FALSE", true)
        case .not(let inner):
            let compiled = condition(inner, matched: matched, parameters: &parameters)
            return compiled.exact ? ("NOT (\(compiled.sql))", true) : ("TRUE", false)
        case .and(let parts), .or(let parts):
            let compiled = parts.map { condition($0, matched: matched, parameters: &parameters) }
            let joiner = if case .and = predicate { " AND " } else { " OR " }
            return ("(" + compiled.map(\.sql).joined(separator: joiner) + ")", compiled.allSatisfy(\.exact))
        case .comparison(let attribute, let comparison, let options, let values):
            if comparison == .notEqual {
                return condition(.not(.comparison(attribute: attribute, operator: .equal, options: options, values: values)), matched: matched, parameters: &parameters)
            }
            let name = parameters.add(ItemRow.withoutNUL(attribute))
            if values == [.null] { return ("NOT EXISTS (SELECT 1 FROM searchlight_attributes a WHERE a.uri = i.uri AND a.name = \(name))", true) }
            if comparison == .matches, case .string(let pattern)? = values.first,
               let texts = matched[MatchesKey(attribute: attribute, options: options.rawValue, pattern: pattern)] {
                return ("EXISTS (SELECT 1 FROM searchlight_attributes a WHERE a.uri = i.uri AND a.name = \(name) AND a.kind = 0 AND a.text = ANY(\(parameters.add(texts))::text[]))", true)
            }
            let row = rowCondition(comparison, options: options, values: values, parameters: &parameters)
            return ("EXISTS (SELECT 1 FROM searchlight_attributes a WHERE a.uri = i.uri AND a.name = \(name) AND (\(row.sql)))", row.exact)
        }
    }

    /// NSPredicate's LIKE pattern as PostgreSQL's: `%`, `_`, and a literal `%`, `_` or backslash escaped
    /// with a backslash.
    static func likePattern(_ pattern: String) -> String {
        var result = ""
        for element in LikePattern(pattern).elements {
            switch element {
            case .any: result += "%"
            case .one: result += "_"
            case .scalar(let scalar):
                if scalar == "%" || scalar == "_" || scalar == "\\" { result += "\\" }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The condition on one attribute row `a`, and whether it is exact.
    private static func rowCondition(_ comparison: FilterPredicate.Operator, options: FilterPredicate.Options, values: [FilterPredicate.Literal],
                                     parameters: inout StatementParameters) -> (sql: String, exact: Bool) {
        // The text as `[c]`, `[d]` or `[cd]` compares it (folded by the writer), and a literal folded alike.
        let column = ["a.text", "a.text_c", "a.text_d", "a.text_cd"][options.rawValue & 3]
        // A NUL is stored as U+FFFD (PostgreSQL's text holds none), so a literal's is compared as one too.
        func text(_ literal: String) -> String { parameters.add(SearchIndex.fold(ItemRow.withoutNUL(literal), options: options.rawValue)) }
        switch comparison {
        case .in:
            let parts = values.map { rowCondition(.equal, options: options, values: [$0], parameters: &parameters) }
            guard !parts.isEmpty else { return ("FALSE", true) }
            return (parts.map { "(\($0.sql))" }.joined(separator: " OR "), parts.allSatisfy(\.exact))
        case .between:
            guard values.count == 2 else { return ("FALSE", true) }
            switch (values[0], values[1]) {
            case (.number(let low), .number(let high)):
                return ("a.kind = 1 AND a.number BETWEEN \(parameters.add(low)) AND \(parameters.add(high))", true)
            case (.date(let low), .date(let high)):
                return ("a.kind = 2 AND a.number BETWEEN \(parameters.add(low.timeIntervalSinceReferenceDate)) AND \(parameters.add(high.timeIntervalSinceReferenceDate))", true)
            case (.string(let low), .string(let high)):
                let texts = "a.kind = 0 AND \(column) BETWEEN \(text(low)) AND \(text(high))"
                guard let from = PredicateParser.date(low), let to = PredicateParser.date(high) else { return (texts, true) }
                let dates = "a.kind = 2 AND a.number BETWEEN \(parameters.add(from.timeIntervalSinceReferenceDate)) AND \(parameters.add(to.timeIntervalSinceReferenceDate))"
                return ("(\(dates)) OR (\(texts))", true)
            default:
                return ("FALSE", true)
            }
        case .beginsWith, .endsWith, .contains, .like:
            guard case .string(let pattern) = values.first else { return ("FALSE", true) }
            let folded = SearchIndex.fold(ItemRow.withoutNUL(pattern), options: options.rawValue)
            let value = parameters.add(comparison == .like ? likePattern(folded) : folded)
            switch comparison {
            case .beginsWith: return ("a.kind = 0 AND starts_with(\(column), \(value))", true)
            case .endsWith: return ("a.kind = 0 AND right(\(column), char_length(\(value))) = \(value)", true)
            case .contains: return ("a.kind = 0 AND strpos(\(column), \(value)) > 0", true)
            default: return ("a.kind = 0 AND \(column) LIKE \(value)", true)
            }
        case .matches:
            // Swift's regular expressions are not PostgreSQL's: without the texts that match (too many to
            // read), only items with a text value are narrowed to.
            guard case .string = values.first else { return ("FALSE", true) }
            return ("a.kind = 0", false)
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            let symbol = comparison == .notEqual ? "<>" : comparison == .equal ? "=" : comparison.rawValue
            switch values.first {
            case .number(let number)?: return ("a.kind = 1 AND a.number \(symbol) \(parameters.add(number))", true)
            case .date(let date)?: return ("a.kind = 2 AND a.number \(symbol) \(parameters.add(date.timeIntervalSinceReferenceDate))", true)
            case .string(let literal)?:
                let texts = "a.kind = 0 AND \(column) \(symbol) \(text(literal))"
                // An ISO-8601 string compared with a date attribute is that date.
                guard let date = PredicateParser.date(literal) else { return (texts, true) }
                return ("(a.kind = 2 AND a.number \(symbol) \(parameters.add(date.timeIntervalSinceReferenceDate))) OR (\(texts))", true)
            case .null?, nil:
                return ("FALSE", true)
            }
        }
    }
}
#endif
