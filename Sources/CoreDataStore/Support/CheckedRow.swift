import Foundation
import GRDB

/// A row of a store's bookkeeping or history tables, read with every value's type checked.
///
/// GRDB's typed subscripts trap on a value of the wrong type; a store is a file nobody controls, so a
/// text `Z_MAX` or a blob where a name belongs must become an error that names the table and column.
struct CheckedRow {
    let row: Row
    let table: String
    let path: String

    /// The integer in column `index` (an integral real counts), nil for NULL.
    func integer(_ index: Int, _ column: String) throws(CoreDataStoreError) -> Int64? {
        let value: DatabaseValue = row[index]
        switch value.storage {
        case .null: return nil
        case .int64(let number): return number
        case .double(let number) where number.rounded() == number && abs(number) < 9.2e18: return Int64(number)
        default: throw mismatch(value, column, expected: "an integer")
        }
    }

    /// The number in column `index` (integers widen), nil for NULL.
    func double(_ index: Int, _ column: String) throws(CoreDataStoreError) -> Double? {
        let value: DatabaseValue = row[index]
        switch value.storage {
        case .null: return nil
        case .int64(let number): return Double(number)
        case .double(let number): return number
        default: throw mismatch(value, column, expected: "a number")
        }
    }

    /// The text in column `index` (a blob of valid UTF-8 counts, as SQLite's dynamic typing allows), nil for NULL.
    func string(_ index: Int, _ column: String) throws(CoreDataStoreError) -> String? {
        let value: DatabaseValue = row[index]
        switch value.storage {
        case .null: return nil
        case .string(let text): return text
        case .blob(let data):
            guard let text = String(data: data, encoding: .utf8) else { throw mismatch(value, column, expected: "text") }
            return text
        default: throw mismatch(value, column, expected: "text")
        }
    }

    /// The bytes in column `index` (text counts as its UTF-8), nil for NULL.
    func data(_ index: Int, _ column: String) throws(CoreDataStoreError) -> Data? {
        let value: DatabaseValue = row[index]
        switch value.storage {
        case .null: return nil
        case .blob(let data): return data
        case .string(let text): return Data(text.utf8)
        default: throw mismatch(value, column, expected: "bytes")
        }
    }

    private func mismatch(_ value: DatabaseValue, _ column: String, expected: String) -> CoreDataStoreError {
        .unsupportedStore(path: path, detail: "\(table).\(column) holds \(Self.describe(value)) where \(expected) belongs; the file is damaged or was not written by Core Data")
    }

    /// A value as a person can read it in one line: kind, and a short escaped excerpt of text.
    static func describe(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let number): return "the integer \(number)"
        case .double(let number): return "the number \(number)"
        case .blob(let data): return "\(data.count) bytes of binary data"
        case .string(let text):
            let excerpt = text.unicodeScalars.prefix(24).map { scalar in
                scalar.properties.generalCategory == .control || scalar == "'" ? scalar.escaped(asASCII: true) : String(scalar)
            }.joined()
            return "the text '\(excerpt)\(text.unicodeScalars.count > 24 ? "…" : "")'"
        }
    }
}

extension Row {
    /// This row with type-checked accessors, for messages naming `table` of the store at `path`.
    func checked(table: String, path: String) -> CheckedRow {
        CheckedRow(row: self, table: table, path: path)
    }
}
