import Foundation
import GRDBSQLite

extension AttributeValue {
    /// Decodes column `index` of the current row of a stepped statement as the attribute type says.
    ///
    /// The hot path of bulk fetches: it reads SQLite's storage class directly and builds the value
    /// once, with the same tolerance for dynamic typing as ``init(_:type:)``.
    init(statement: OpaquePointer, column index: Int32, type: AttributeType) {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL:
            self = .null
        case SQLITE_INTEGER:
            let number = sqlite3_column_int64(statement, index)
            switch type {
            case .boolean: self = .boolean(number != 0)
            case .double, .float: self = .double(Double(number))
            case .decimal: self = .decimal(Double(number))
            case .date: self = .date(Date(timeIntervalSinceReferenceDate: Double(number)))
            default: self = .integer(number)
            }
        case SQLITE_FLOAT:
            let number = sqlite3_column_double(statement, index)
            switch type {
            case .integer16, .integer32, .integer64:
                self = number.rounded() == number && abs(number) < 9.2e18 ? .integer(Int64(number)) : .double(number)
            case .boolean: self = .boolean(number != 0)
            case .decimal: self = .decimal(number)
            case .date: self = .date(Date(timeIntervalSinceReferenceDate: number))
            default: self = .double(number)
            }
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, index))
            let text = sqlite3_column_text(statement, index).map {
                String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
            } ?? ""
            switch type {
            case .uuid: self = UUID(uuidString: text).map(AttributeValue.uuid) ?? .string(text)
            case .uri: self = .uri(text)
            case .binaryData: self = .binary(Data(text.utf8))
            case .transformable: self = .transformable(Data(text.utf8))
            default: self = .string(text)
            }
        default:
            let count = Int(sqlite3_column_bytes(statement, index))
            let data = sqlite3_column_blob(statement, index).map { Data(bytes: $0, count: count) } ?? Data()
            switch type {
            case .uuid where data.count == 16: self = .uuid(UUID(bytes: [UInt8](data)))
            case .transformable: self = .transformable(data)
            case .string: self = String(data: data, encoding: .utf8).map(AttributeValue.string) ?? .binary(data)
            case .uri: self = String(data: data, encoding: .utf8).map(AttributeValue.uri) ?? .binary(data)
            default: self = .binary(data)
            }
        }
    }
}
