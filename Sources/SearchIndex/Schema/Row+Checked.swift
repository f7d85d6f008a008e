import GRDB

/// Type-checked reads of index rows: a damaged index (or one edited by hand) is an error that says so,
/// never a trap in GRDB's typed subscripts.
extension Row {
    private func damaged(_ index: Int, _ expected: String) -> SearchIndexError {
        let value: DatabaseValue = self[index]
        let found = switch value.storage {
        case .null: "NULL"
        case .int64: "an integer"
        case .double: "a real number"
        case .string: "text"
        case .blob: "binary data"
        }
        // The path is filled in by SearchIndex.indexError, which knows it.
        return .notAnIndex(path: "", detail: "it is damaged: column \(columnNames.dropFirst(index).first ?? String(index)) holds \(found) where \(expected) belongs")
    }

    /// Text, never NULL.
    func text(_ index: Int) throws -> String {
        let value: DatabaseValue = self[index]
        guard case .string(let text) = value.storage else { throw damaged(index, "text") }
        return text
    }

    /// Text, or nil for NULL.
    func optionalText(_ index: Int) throws -> String? {
        let value: DatabaseValue = self[index]
        if value.isNull { return nil }
        return try text(index)
    }

    /// An integer, never NULL.
    func integer(_ index: Int) throws -> Int64 {
        let value: DatabaseValue = self[index]
        guard case .int64(let number) = value.storage else { throw damaged(index, "an integer") }
        return number
    }

    /// An integer, or nil for NULL.
    func optionalInteger(_ index: Int) throws -> Int64? {
        let value: DatabaseValue = self[index]
        if value.isNull { return nil }
        return try integer(index)
    }

    /// A number (integers widen), or nil for NULL.
    func optionalNumber(_ index: Int) throws -> Double? {
        let value: DatabaseValue = self[index]
        switch value.storage {
        case .null: return nil
        case .int64(let number): return Double(number)
        case .double(let number): return number
        default: throw damaged(index, "a number")
        }
    }

    /// A number (integers widen), never NULL.
    func number(_ index: Int) throws -> Double {
        guard let number = try optionalNumber(index) else { throw damaged(index, "a number") }
        return number
    }
}
