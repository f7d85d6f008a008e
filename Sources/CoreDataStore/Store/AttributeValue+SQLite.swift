import Foundation
import GRDB

extension AttributeValue {
    /// A column value in one of SQLite's storage classes, as either reader finds it.
    enum StoredValue {
        case null, integer(Int64), real(Double), text(String), blob(Data)
    }

    /// Decodes a column value as the model's attribute type says (see ``init(_:type:)-(StoredValue,_)``).
    init(_ value: DatabaseValue, type: AttributeType) {
        let stored: StoredValue = switch value.storage {
        case .null: .null
        case .int64(let number): .integer(number)
        case .double(let number): .real(number)
        case .string(let text): .text(text)
        case .blob(let data): .blob(data)
        }
        self.init(stored, type: type)
    }

    /// The one attribute decoder: a stored value as the model's attribute type says, tolerating SQLite's
    /// dynamic typing (an integer in a REAL column, text in a BLOB column) the way Core Data does.
    init(_ value: StoredValue, type: AttributeType) {
        switch (value, type) {
        case (.null, _):
            self = .null
        case (.integer(let number), .boolean):
            self = .boolean(number != 0)
        case (.integer(let number), .double), (.integer(let number), .float):
            self = .double(Double(number))
        case (.integer(let number), .decimal):
            self = .decimal(Double(number))
        case (.integer(let number), .date):
            self = .date(Date(timeIntervalSinceReferenceDate: Double(number)))
        case (.integer(let number), _):
            self = .integer(number)
        case (.real(let number), .integer16), (.real(let number), .integer32), (.real(let number), .integer64):
            self = number.rounded() == number && abs(number) < 9.2e18 ? .integer(Int64(number)) : .double(number)
        case (.real(let number), .boolean):
            self = .boolean(number != 0)
        case (.real(let number), .decimal):
            self = .decimal(number)
        case (.real(let number), .date):
            self = .date(Date(timeIntervalSinceReferenceDate: number))
        case (.real(let number), _):
            self = .double(number)
        case (.text(let text), .uuid):
            self = UUID(uuidString: text).map(AttributeValue.uuid) ?? .string(text)
        case (.text(let text), .uri):
            self = .uri(text)
        case (.text(let text), .binaryData):
            self = .binary(Data(text.utf8))
        case (.text(let text), .transformable):
            self = .transformable(Data(text.utf8))
        case (.text(let text), _):
            self = .string(text)
        case (.blob(let data), .uuid) where data.count == 16:
            self = .uuid(UUID(bytes: [UInt8](data)))
        case (.blob(let data), .transformable):
            self = .transformable(data)
        case (.blob(let data), .string):
            self = String(data: data, encoding: .utf8).map(AttributeValue.string) ?? .binary(data)
        case (.blob(let data), .uri):
            self = String(data: data, encoding: .utf8).map(AttributeValue.uri) ?? .binary(data)
        case (.blob(let data), _):
            self = .binary(data)
        }
    }

    /// The SQLite encoding Core Data uses for this value.
    package var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let number): number.databaseValue
        case .boolean(let flag): (flag ? 1 : 0 as Int64).databaseValue
        case .double(let number), .decimal(let number): number.databaseValue
        case .string(let text), .uri(let text): text.databaseValue
        case .date(let date): date.timeIntervalSinceReferenceDate.databaseValue
        case .uuid(let uuid): uuid.bytes.databaseValue
        case .binary(let data), .transformable(let data): data.databaseValue
        }
    }

    /// Whether this value can be stored in an attribute of `type` (nil is checked separately).
    package func fits(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.null, _): true
        case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64): true
        case (.boolean, .boolean): true
        case (.double, .double), (.double, .float), (.integer, .double), (.integer, .float): true
        case (.decimal, .decimal), (.double, .decimal), (.integer, .decimal): true
        case (.string, .string): true
        case (.date, .date): true
        case (.uuid, .uuid): true
        case (.uri, .uri), (.string, .uri): true
        case (.binary, .binaryData): true
        case (.transformable, .transformable), (.binary, .transformable): true
        default: false
        }
    }
}

extension UUID {
    /// A UUID from exactly 16 bytes.
    init(bytes b: [UInt8]) {
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// The 16 bytes Core Data stores for a UUID attribute.
    var bytes: Data {
        var value = uuid
        return Data(bytes: &value, count: MemoryLayout.size(ofValue: value))
    }
}
