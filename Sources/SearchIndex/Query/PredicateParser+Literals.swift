import Foundation

/// Literals of a predicate: strings, numbers, dates, Booleans, lists.
extension PredicateParser {
    mutating func parseList() throws(SearchIndexError) -> [FilterPredicate.Literal] {
        guard isSymbol("{") else { throw error("expected '{' to start a list of values: {1, 10}") }
        advance()
        var values: [FilterPredicate.Literal] = []
        if isSymbol("}") { advance(); return values }
        while true {
            values.append(try parseLiteral())
            if isSymbol(",") { advance(); continue }
            guard isSymbol("}") else { throw error("expected ',' or '}' in the list, found \(describe(current.token))") }
            advance()
            return values
        }
    }

    /// A variable's value as a number when it is written as one in decimal (`42`, `-3.5`, `1e6`), nil
    /// otherwise: a code with a leading zero (`01234`, a postcode) or `0x10` stays text, as typed, where
    /// Swift's `Double("01234")` and `Double("0x10")` would read 1234 and 16.
    static func decimalNumber(_ text: String) -> Double? {
        guard let number = Double(text), number.isFinite else { return nil }
        let digits = text.drop { $0 == "-" || $0 == "+" }
        guard let first = digits.first, first.isASCII, first.isNumber || first == "." else { return nil }
        // A leading zero must be the whole integer part (`0`, `0.5`, `0e3`).
        if first == "0", let second = digits.dropFirst().first, second.isNumber { return nil }
        guard digits.allSatisfy({ $0.isASCII && ($0.isNumber || ".eE+-".contains($0)) }) else { return nil }
        return number
    }

    mutating func parseLiteral() throws(SearchIndexError) -> FilterPredicate.Literal {
        variableText = nil
        let position = current.position
        switch current.token {
        case .string(let value):
            advance()
            return .string(value)
        case .number(let value):
            advance()
            return .number(value)
        case .identifier(let word) where word.hasPrefix("$"):
            let name = String(word.dropFirst())
            guard let variables else {
                throw error("'\(word)' is a variable; only a saved search's predicate takes $VARIABLES (quote text: \"\(word)\")")
            }
            guard let value = variables[name] else { throw error("no value for \(word)") }
            advance()
            variableText = value
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { return .string(String(value.dropFirst().dropLast())) }
            if let number = Self.decimalNumber(value.trimmingCharacters(in: .whitespaces)) { return .number(number) }
            return .string(value)
        case .identifier(let word):
            switch word.uppercased() {
            case "YES", "TRUE": advance(); return .number(1)
            case "NO", "FALSE": advance(); return .number(0)
            case "NIL", "NULL": advance(); return .null
            case "CAST":
                advance()
                guard isSymbol("(") else { throw error("expected '(' after CAST", at: position) }
                advance()
                let value = current.token
                advance()
                guard isSymbol(",") else { throw error("expected CAST(value, 'NSDate')", at: position) }
                advance()
                guard current.token == .string("NSDate") else { throw error("only CAST(…, 'NSDate') is understood", at: position) }
                advance()
                guard isSymbol(")") else { throw error("expected ')' to close CAST", at: position) }
                advance()
                switch value {
                case .number(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
                case .string(let text):
                    guard let date = Self.date(text) else { throw error("'\(text)' is not an ISO-8601 date (2024-05-10 or 2024-05-10T14:14:07Z)", at: position) }
                    return .date(date)
                default: throw error("CAST takes a number of seconds since 2001 or an ISO-8601 string", at: position)
                }
            default:
                throw error("expected a value (a string, a number, YES, NO, nil or CAST(…, 'NSDate')), found '\(word)'; quote text: \"\(word)\"")
            }
        default:
            throw error("expected a value, found \(describe(current.token))")
        }
    }

    /// An ISO-8601 date or date-time (UTC unless it says otherwise).
    package static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day())
    }
}
