/// The type of a Core Data attribute, with the numeric codes of `NSAttributeType`.
public enum AttributeType: Int, Sendable, CaseIterable, Codable {
    /// No type (`NSUndefinedAttributeType`), only legal on transient attributes.
    case undefined = 0
    /// A 16-bit integer.
    case integer16 = 100
    /// A 32-bit integer.
    case integer32 = 200
    /// A 64-bit integer.
    case integer64 = 300
    /// An `NSDecimalNumber`, stored as REAL.
    case decimal = 400
    /// A double-precision number.
    case double = 500
    /// A single-precision number (stored as REAL like `double`).
    case float = 600
    /// A string.
    case string = 700
    /// A Boolean, stored as 0/1.
    case boolean = 800
    /// A date, stored as seconds since 2001-01-01 UTC.
    case date = 900
    /// Binary data.
    case binaryData = 1000
    /// A UUID, stored as 16 bytes.
    case uuid = 1100
    /// A URL, stored as text.
    case uri = 1200
    /// A value archived by a value transformer, stored as bytes.
    case transformable = 1800
    /// An object ID (expression results only; no column).
    case objectID = 2000
    /// A composite attribute, flattened into one column per element.
    case composite = 2100

    /// The `attributeType` spelling of `.xcdatamodel` files.
    public var modelFileName: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binaryData: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "ObjectID"
        case .composite: "Composite"
        }
    }

    /// Parses the `attributeType` spelling of `.xcdatamodel` files.
    public init?(modelFileName: String) {
        guard let type = Self.allCases.first(where: { $0.modelFileName == modelFileName }) else { return nil }
        self = type
    }

    /// The column type Core Data declares for this attribute, or `nil` when it has no column.
    public var columnType: String? {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .double, .float: "FLOAT"
        case .date: "TIMESTAMP"
        case .decimal: "DECIMAL"
        case .string, .uri: "VARCHAR"
        case .binaryData, .uuid, .transformable: "BLOB"
        case .undefined, .objectID, .composite: nil
        }
    }

    /// Whether values are integers in SQL (integers and Booleans).
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: true
        default: false
        }
    }
}
