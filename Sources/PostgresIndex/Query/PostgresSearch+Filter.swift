#if PostgreSQL
import Foundation
import PostgresNIO
import SearchIndex

extension PostgresSearch {
    /// The filter as an SQL condition on the items row `i`, read through `searchlight_attributes`, and
    /// whether it decides the filter exactly.
    ///
    /// The condition always keeps every item the filter keeps (it may keep more): comparisons that
    /// PostgreSQL runs as SQLite does (numbers, dates, text without `[c]`/`[d]` in byte order, prefixes,
    /// `nil`) are exact; the others (folding, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, strings that read
    /// as dates) only narrow down to items with a text value of the attribute, and the rows they keep
    /// are checked in Swift (``FilterPredicate/isSatisfied(by:)``). A `NOT` of an inexact part narrows
    /// nothing.
    static func condition(_ predicate: FilterPredicate, parameters: inout StatementParameters) -> (sql: String, exact: Bool) {
        switch predicate {
        case .constant(let value):
            return (value ? "TRUE" : "FALSE", true)
        case .not(let inner):
            let compiled = condition(inner, parameters: &parameters)
            return compiled.exact ? ("NOT (\(compiled.sql))", true) : ("TRUE", false)
        case .and(let parts), .or(let parts):
            let compiled = parts.map { condition($0, parameters: &parameters) }
            let joiner = if case .and = predicate { " AND " } else { " OR " }
            return ("(" + compiled.map(\.sql).joined(separator: joiner) + ")", compiled.allSatisfy(\.exact))
        case .comparison(let attribute, let comparison, let options, let values):
            if comparison == .notEqual {
                return condition(.not(.comparison(attribute: attribute, operator: .equal, options: options, values: values)), parameters: &parameters)
            }
            let name = parameters.add(attribute)
            if values == [.null] { return ("NOT EXISTS (SELECT 1 FROM searchlight_attributes a WHERE a.uri = i.uri AND a.name = \(name))", true) }
            let row = rowCondition(comparison, options: options, values: values, parameters: &parameters)
            return ("EXISTS (SELECT 1 FROM searchlight_attributes a WHERE a.uri = i.uri AND a.name = \(name) AND (\(row.sql)))", row.exact)
        }
    }

    /// The condition on one attribute row `a`, and whether it is exact.
    private static func rowCondition(_ comparison: FilterPredicate.Operator, options: FilterPredicate.Options, values: [FilterPredicate.Literal],
                                     parameters: inout StatementParameters) -> (sql: String, exact: Bool) {
        let textOnly = ("a.kind = 0", false)
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
                if PredicateParser.date(low) != nil && PredicateParser.date(high) != nil { return ("a.kind <> 1", false) }
                guard options.isEmpty else { return textOnly }
                return ("a.kind = 0 AND a.text BETWEEN \(parameters.add(low)) AND \(parameters.add(high))", true)
            default:
                return ("FALSE", true)
            }
        case .beginsWith:
            guard case .string(let prefix) = values.first else { return ("FALSE", true) }
            guard options.isEmpty else { return textOnly }
            return ("a.kind = 0 AND starts_with(a.text, \(parameters.add(prefix)))", true)
        case .endsWith, .contains, .like, .matches:
            guard case .string = values.first else { return ("FALSE", true) }
            return textOnly
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            let symbol = comparison == .notEqual ? "<>" : comparison == .equal ? "=" : comparison.rawValue
            switch values.first {
            case .number(let number)?: return ("a.kind = 1 AND a.number \(symbol) \(parameters.add(number))", true)
            case .date(let date)?: return ("a.kind = 2 AND a.number \(symbol) \(parameters.add(date.timeIntervalSinceReferenceDate))", true)
            case .string(let text)?:
                if PredicateParser.date(text) != nil { return ("a.kind <> 1", false) }
                guard options.isEmpty else { return textOnly }
                return ("a.kind = 0 AND a.text \(symbol) \(parameters.add(text))", true)
            case .null?, nil:
                return ("FALSE", true)
            }
        }
    }
}
#endif
