import Foundation

extension FilterPredicate {
    /// Whether an item with these attribute values passes the filter, decided in Swift exactly as the
    /// SQLite index's SQL decides it (``sql(correlated:)``): for a backend that cannot run that SQL.
    ///
    /// A comparison passes when one of the attribute's values satisfies it; `!=` is "not `==`" (an item
    /// without the attribute passes); `== nil` passes an item without the attribute. Text compares as
    /// SQLite's BINARY collation does (UTF-8 bytes), after `[c]`/`[d]` folding (`MATCHES [c]` ignores case in
    /// its expression instead, ``MatchesPatterns``); a string that reads as an
    /// ISO-8601 date also compares with date values. Values that are not finite are never stored, so they
    /// never match.
    package func isSatisfied(by attributes: [String: [FilterValue]]) -> Bool {
        var patterns = MatchesPatterns()
        return isSatisfied(by: attributes, patterns: &patterns)
    }

    /// Whether an item with these attribute values passes the filter, `patterns` keeping the regular
    /// expressions of `MATCHES` compiled from one item to the next.
    package func isSatisfied(by attributes: [String: [FilterValue]], patterns: inout MatchesPatterns) -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .not(let inner):
            return !inner.isSatisfied(by: attributes, patterns: &patterns)
        case .and(let parts):
            return parts.allSatisfy { $0.isSatisfied(by: attributes, patterns: &patterns) }
        case .or(let parts):
            return parts.contains { $0.isSatisfied(by: attributes, patterns: &patterns) }
        case .comparison(let attribute, let comparison, let options, let values):
            if comparison == .notEqual {
                return !FilterPredicate.comparison(attribute: attribute, operator: .equal, options: options, values: values).isSatisfied(by: attributes, patterns: &patterns)
            }
            let stored = (attributes[attribute] ?? []).filter(\.isFinite)
            if values == [.null] { return stored.isEmpty }
            return stored.contains { Self.holds(comparison, options: options, values: values, for: $0, patterns: &patterns) }
        }
    }

    /// Whether one attribute value satisfies a comparison (the SQL's condition on one attribute row).
    private static func holds(_ comparison: Operator, options: Options, values: [Literal], for value: FilterValue, patterns: inout MatchesPatterns) -> Bool {
        if comparison == .matches {
            // The raw text and pattern: `[c]` ignores case in the expression (``MatchesPatterns``).
            guard case .string(let pattern) = values.first, let raw = value.textColumn else { return false }
            return patterns.wholeMatch(raw, pattern: pattern, options: options.rawValue)
        }
        func fold(_ string: String) -> String { SearchIndex.fold(string, options: options.rawValue) }
        let text = value.textColumn.map(fold)
        switch comparison {
        case .in:
            return values.contains { holds(.equal, options: options, values: [$0], for: value, patterns: &patterns) }
        case .between:
            guard values.count == 2 else { return false }
            switch (values[0], values[1], value) {
            case (.number(let low), .number(let high), .number(let number)):
                return low <= number && number <= high
            case (.date(let low), .date(let high), .date(let date)):
                return low.timeIntervalSinceReferenceDate <= date.timeIntervalSinceReferenceDate
                    && date.timeIntervalSinceReferenceDate <= high.timeIntervalSinceReferenceDate
            case (.string(let low), .string(let high), _):
                if let from = PredicateParser.date(low), let to = PredicateParser.date(high), case .date(let date) = value {
                    let seconds = date.timeIntervalSinceReferenceDate
                    return from.timeIntervalSinceReferenceDate <= seconds && seconds <= to.timeIntervalSinceReferenceDate
                }
                guard let text else { return false }
                return !BinaryCollation.precedes(text, fold(low)) && !BinaryCollation.precedes(fold(high), text)
            default:
                return false
            }
        case .matches:
            return false  // decided above, on the raw text
        case .beginsWith, .endsWith, .contains, .like:
            guard case .string(let raw) = values.first, let text else { return false }
            let pattern = fold(raw)
            switch comparison {
            case .beginsWith: return text.utf8.starts(with: pattern.utf8)
            case .endsWith: return text.utf8.reversed().starts(with: pattern.utf8.reversed())
            case .contains: return pattern.isEmpty || Self.bytes(of: text, contain: pattern)
            default: return LikePattern(pattern).matches(Array(text.unicodeScalars))
            }
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            switch (values.first, value) {
            case (.number(let literal)?, .number(let number)):
                return compare(number, literal, comparison)
            case (.date(let literal)?, .date(let date)):
                return compare(date.timeIntervalSinceReferenceDate, literal.timeIntervalSinceReferenceDate, comparison)
            case (.string(let raw)?, _):
                if case .date(let date) = value {
                    guard let literal = PredicateParser.date(raw) else { return false }
                    return compare(date.timeIntervalSinceReferenceDate, literal.timeIntervalSinceReferenceDate, comparison)
                }
                guard let text else { return false }
                let literal = fold(raw)
                let order: Int = BinaryCollation.precedes(text, literal) ? -1 : BinaryCollation.precedes(literal, text) ? 1 : 0
                return compare(order, 0, comparison)
            default:
                return false
            }
        }
    }

    private static func compare<Value: Comparable>(_ value: Value, _ literal: Value, _ comparison: Operator) -> Bool {
        switch comparison {
        case .equal: value == literal
        case .notEqual: value != literal
        case .less: value < literal
        case .lessOrEqual: value <= literal
        case .greater: value > literal
        case .greaterOrEqual: value >= literal
        default: false
        }
    }

    /// Whether `needle`'s UTF-8 bytes occur in `text`'s (as `instr` looks).
    private static func bytes(of text: String, contain needle: String) -> Bool {
        let haystack = Array(text.utf8), needle = Array(needle.utf8)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in haystack[start..<(start + needle.count)].elementsEqual(needle) }
    }
}
