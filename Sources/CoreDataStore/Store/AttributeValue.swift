import Foundation

/// A typed attribute value, decoded from its SQLite encoding according to the model.
public enum AttributeValue: Sendable, Hashable {
    /// No value.
    case null
    /// An integer attribute (16, 32 or 64 bits).
    case integer(Int64)
    /// A Boolean attribute.
    case boolean(Bool)
    /// A Double or Float attribute.
    case double(Double)
    /// A Decimal attribute (Core Data stores it as REAL).
    case decimal(Double)
    /// A String attribute.
    case string(String)
    /// A Date attribute.
    case date(Date)
    /// A UUID attribute.
    case uuid(UUID)
    /// A URI attribute, as text.
    case uri(String)
    /// A Binary attribute.
    case binary(Data)
    /// A Transformable attribute: the transformer's opaque bytes.
    case transformable(Data)

    /// Whether the value is `.null`.
    public var isNull: Bool { self == .null }

    /// The value's text, for string-like values.
    public var stringValue: String? {
        switch self {
        case .string(let text), .uri(let text): text
        default: nil
        }
    }

    /// The value as a number, for numeric values (Booleans are 0 or 1, dates are seconds since 2001).
    public var doubleValue: Double? {
        switch self {
        case .integer(let number): Double(number)
        case .boolean(let flag): flag ? 1 : 0
        case .double(let number), .decimal(let number): number
        case .date(let date): date.timeIntervalSinceReferenceDate
        default: nil
        }
    }
}
