import Foundation

/// One value of an item's filter attribute (`population`, `country`, `updated`): what filters,
/// orders and facets compare. Booleans are numbers (1 and 0), as Core Data stores them.
public enum FilterValue: Sendable, Hashable {
    /// Text, compared exactly or with `[c]`/`[d]`/`[cd]`.
    case string(String)
    /// A number (integers, decimals, Booleans as 1 and 0).
    case number(Double)
    /// A point in time.
    case date(Date)

    /// How the index stores the kind (the `kind` column of `item_attributes`).
    package var kindCode: Int {
        switch self {
        case .string: 0
        case .number: 1
        case .date: 2
        }
    }

    /// Whether the index can hold the value: a string, or a number or date that is finite.
    public var isFinite: Bool { numberColumn?.isFinite ?? true }

    /// The numeric column: the number, or the date's seconds since 2001 (Core Data's reference date).
    package var numberColumn: Double? {
        switch self {
        case .string: nil
        case .number(let number): number
        case .date(let date): date.timeIntervalSinceReferenceDate
        }
    }

    /// The text column.
    package var textColumn: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
