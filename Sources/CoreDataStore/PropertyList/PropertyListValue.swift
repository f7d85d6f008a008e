import Foundation

/// A value of a property list, as stored in Core Data's binary plists (`Z_PLIST`, `Z_MODELCACHE`).
///
/// Unlike Foundation's property list types this keeps `CF$UID` references, which keyed archives
/// (`NSKeyedArchiver`) use to point at their `$objects`, and it is `Sendable` and `Hashable`.
package enum PropertyListValue: Sendable, Hashable {
    /// The binary plist `null` marker.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer (binary plists store up to 64-bit signed values; 128-bit ones are narrowed).
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// A date, as seconds since 2001-01-01 00:00:00 UTC (Core Data's reference date).
    case date(Double)
    /// Raw bytes.
    case data(Data)
    /// A string (ASCII or UTF-16 in the file).
    case string(String)
    /// A keyed-archive reference: an index into the archive's `$objects` array.
    case uid(UInt64)
    /// An ordered array.
    case array([PropertyListValue])
    /// A set (kept in file order).
    case set([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
    /// The string, if this is a string.
    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integer (or a Boolean, which archives sometimes store as 0/1).
    package var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .bool(let value): return value ? 1 : 0
        default: return nil
        }
    }

    /// The Boolean, if this is a Boolean or an integer.
    package var boolValue: Bool? {
        switch self {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        default: return nil
        }
    }

    /// The number as a `Double`, if this is a real or an integer.
    package var doubleValue: Double? {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    /// The bytes, if this is data.
    package var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array or a set.
    package var arrayValue: [PropertyListValue]? {
        switch self {
        case .array(let values), .set(let values): return values
        default: return nil
        }
    }

    /// The dictionary, if this is a dictionary.
    package var dictionaryValue: [String: PropertyListValue]? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// Looks up a key when this is a dictionary.
    package subscript(key: String) -> PropertyListValue? {
        dictionaryValue?[key]
    }
}
