import Foundation

/// A filter over items' attributes in `NSPredicate` format: `population > 1000000 AND country == "JP"`.
///
/// Comparisons `== != < <= > >=`, `BETWEEN {a, b}`, `IN {a, b, …}`, `BEGINSWITH`, `ENDSWITH`,
/// `CONTAINS`, `LIKE` (`*` and `?`) and `MATCHES` (a regular expression), each with `[c]`, `[d]` or
/// `[cd]`; `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses, `TRUEPREDICATE`, `FALSEPREDICATE`; literals:
/// strings in single or double quotes, numbers, `YES`/`TRUE`/`NO`/`FALSE` (1 and 0), `nil`/`NULL`,
/// dates as `CAST('2024-05-10T14:14:07Z', 'NSDate')`, `CAST(737000000, 'NSDate')` (seconds since 2001,
/// as `NSPredicate` prints them) or an ISO-8601 string compared with a date attribute.
public indirect enum FilterPredicate: Sendable, Hashable {
    /// A comparison operator, as `NSPredicate` names them.
    public enum Operator: String, Sendable, Hashable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", contains = "CONTAINS", like = "LIKE", matches = "MATCHES"
        case between = "BETWEEN", `in` = "IN"
    }

    /// A literal on the right of a comparison.
    public enum Literal: Sendable, Hashable {
        case string(String)
        case number(Double)
        case date(Date)
        case null
    }

    /// `[c]` (case-insensitive) and `[d]` (diacritic-insensitive).
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `[c]`.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`.
        public static let diacriticInsensitive = Options(rawValue: 2)
    }

    case comparison(attribute: String, operator: Operator, options: Options, values: [Literal])
    case and([FilterPredicate])
    case or([FilterPredicate])
    case not(FilterPredicate)
    case constant(Bool)

    /// Every attribute name the predicate compares.
    public var attributes: Set<String> {
        switch self {
        case .comparison(let attribute, _, _, _): [attribute]
        case .and(let parts), .or(let parts): parts.reduce(into: []) { $0.formUnion($1.attributes) }
        case .not(let inner): inner.attributes
        case .constant: []
        }
    }
}
