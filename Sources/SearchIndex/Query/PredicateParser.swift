import Foundation

/// Parses `NSPredicate` format text into a ``FilterPredicate``, or says where and why it cannot.
public struct PredicateParser {
    /// The longest predicate accepted, in characters.
    public static let maximumLength = 10_000
    /// How deeply parentheses and `NOT` may nest.
    public static let maximumDepth = 32

    enum Token: Equatable {
        case identifier(String), string(String), number(Double), symbol(String), end
    }

    let text: String
    /// Values of `$VARIABLES` (a saved search's); nil where variables are not allowed.
    let variables: [String: String]?
    var tokens: [(token: Token, position: Int)] = []
    /// The text of the variable the last literal read came from, if it came from one.
    var variableText: String?
    var index = 0
    var depth = 0

    /// Parses a predicate. `variables` gives the values of its `$VARIABLES`, as a fetch-request
    /// template's substitution variables: a value that reads as a number is a number, one in double
    /// quotes (`"007"`) or any other text a string (an ISO-8601 string compares as a date with dates).
    public static func parse(_ text: String, variables: [String: String]? = nil) throws(SearchIndexError) -> FilterPredicate {
        guard text.unicodeScalars.count <= maximumLength else {
            throw .invalidPredicate(reason: "the predicate is longer than \(maximumLength) characters", position: maximumLength)
        }
        // SQLite hands a text argument to a function up to its first NUL: a pattern or value holding one
        // would be compared cut short. No filter needs one.
        if let nul = text.unicodeScalars.firstIndex(of: "\u{0}") {
            throw .invalidPredicate(reason: "a filter cannot contain the NUL character", position: text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: nul) + 1)
        }
        if let name = variables?.first(where: { $0.value.unicodeScalars.contains("\u{0}") })?.key {
            throw .invalidPredicate(reason: "the value of $\(name) contains the NUL character, which a filter cannot hold", position: 1)
        }
        var parser = PredicateParser(text: text, variables: variables)
        try parser.tokenize()
        let predicate = try parser.parseOr()
        guard case .end = parser.current.token else { throw parser.error("expected AND, OR or the end, found \(parser.describe(parser.current.token))") }
        return predicate
    }

    private init(text: String, variables: [String: String]?) {
        self.text = text
        self.variables = variables
    }

    /// The predicate with its attribute names replaced (`country.code` → `country`), as written otherwise:
    /// a fetch-request template's key paths become the names of the item attributes that hold them.
    public static func renamingAttributes(in text: String, _ names: [String: String]) throws(SearchIndexError) -> String {
        var parser = PredicateParser(text: text, variables: nil)
        try parser.tokenize()
        var scalars = Array(text.unicodeScalars)
        for entry in parser.tokens.reversed() {
            guard case .identifier(let word) = entry.token, let name = names[word] else { continue }
            scalars.replaceSubrange(entry.position..<(entry.position + word.unicodeScalars.count), with: Array(name.unicodeScalars))
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// The names of the `$VARIABLES` a predicate uses, without the `$`.
    public static func variables(in text: String) throws(SearchIndexError) -> Set<String> {
        var parser = PredicateParser(text: text, variables: nil)
        try parser.tokenize()
        return Set(parser.tokens.compactMap { entry in
            guard case .identifier(let word) = entry.token, word.hasPrefix("$") else { return nil }
            return String(word.dropFirst())
        })
    }

    var current: (token: Token, position: Int) { tokens[min(index, tokens.count - 1)] }

    func error(_ reason: String, at position: Int? = nil) -> SearchIndexError {
        .invalidPredicate(reason: reason, position: (position ?? current.position) + 1)
    }

    func describe(_ token: Token) -> String {
        switch token {
        case .identifier(let name): "'\(name)'"
        case .string(let value): "the string \"\(value)\""
        case .number(let value): "the number \(value)"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end"
        }
    }

    // MARK: Lexer

    mutating func tokenize() throws(SearchIndexError) {
        let scalars = Array(text.unicodeScalars)
        var position = 0
        while position < scalars.count {
            let scalar = scalars[position]
            if scalar.properties.isWhitespace { position += 1; continue }
            let start = position
            if scalar == "\"" || scalar == "'" {
                var value = String.UnicodeScalarView()
                position += 1
                var closed = false
                while position < scalars.count {
                    if scalars[position] == "\\", position + 1 < scalars.count {
                        value.append(scalars[position + 1])
                        position += 2
                        continue
                    }
                    if scalars[position] == scalar { closed = true; position += 1; break }
                    value.append(scalars[position])
                    position += 1
                }
                guard closed else { throw error("the string that starts here is not closed with \(scalar)", at: start) }
                tokens.append((.string(String(value)), start))
                continue
            }
            if scalar.properties.isAlphabetic || scalar == "_" || scalar == "$" {
                while position < scalars.count, scalars[position].properties.isAlphabetic || scalars[position].properties.numericType != nil
                        || scalars[position] == "_" || scalars[position] == "." || scalars[position] == "$" {
                    position += 1
                }
                tokens.append((.identifier(String(String.UnicodeScalarView(scalars[start..<position]))), start))
                continue
            }
            if ("0"..."9").contains(scalar) || ((scalar == "-" || scalar == "+" || scalar == ".") && position + 1 < scalars.count && ("0"..."9").contains(scalars[position + 1])) {
                position += 1
                while position < scalars.count, ("0"..."9").contains(scalars[position]) || scalars[position] == "." || scalars[position] == "e" || scalars[position] == "E"
                        || ((scalars[position] == "-" || scalars[position] == "+") && (scalars[position - 1] == "e" || scalars[position - 1] == "E")) {
                    position += 1
                }
                let literal = String(String.UnicodeScalarView(scalars[start..<position]))
                guard let number = Double(literal), number.isFinite else { throw error("'\(literal)' is not a number", at: start) }
                tokens.append((.number(number), start))
                continue
            }
            let two = position + 1 < scalars.count ? String(String.UnicodeScalarView(scalars[position...(position + 1)])) : ""
            if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
                tokens.append((.symbol(two), start))
                position += 2
                continue
            }
            if "()<>=!{},[]".unicodeScalars.contains(scalar) {
                tokens.append((.symbol(String(scalar)), start))
                position += 1
                continue
            }
            throw error("'\(String(scalar))' is not part of a predicate", at: start)
        }
        tokens.append((.end, scalars.count))
    }

    // MARK: Grammar

    mutating func advance() { index += 1 }

    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name) = current.token { return name.uppercased() == word }
        return false
    }

    func isSymbol(_ symbol: String) -> Bool { current.token == .symbol(symbol) }

    mutating func parseOr() throws(SearchIndexError) -> FilterPredicate {
        var parts = [try parseAnd()]
        while isKeyword("OR") || isSymbol("||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    mutating func parseAnd() throws(SearchIndexError) -> FilterPredicate {
        var parts = [try parseNot()]
        while isKeyword("AND") || isSymbol("&&") {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    mutating func nested<T>(_ body: (inout PredicateParser) throws(SearchIndexError) -> T) throws(SearchIndexError) -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw error("the predicate nests more than \(Self.maximumDepth) levels deep") }
        return try body(&self)
    }

    mutating func parseNot() throws(SearchIndexError) -> FilterPredicate {
        if isKeyword("NOT") || isSymbol("!") {
            advance()
            return .not(try nested { parser throws(SearchIndexError) in try parser.parseNot() })
        }
        return try parsePrimary()
    }

    mutating func parsePrimary() throws(SearchIndexError) -> FilterPredicate {
        if isSymbol("(") {
            advance()
            let inner = try nested { parser throws(SearchIndexError) in try parser.parseOr() }
            guard isSymbol(")") else { throw error("expected ')' to close the '(', found \(describe(current.token))") }
            advance()
            return inner
        }
        if isKeyword("TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword("FALSEPREDICATE") { advance(); return .constant(false) }
        guard case .identifier(let attribute) = current.token, !["AND", "OR", "NOT"].contains(attribute.uppercased()) else {
            throw error("expected an attribute name, found \(describe(current.token))")
        }
        guard !attribute.hasPrefix("$") else {
            throw error("'\(attribute)' stands for a value, not an attribute: compare an attribute with it (name == \(attribute))")
        }
        advance()
        let operatorPosition = current.position
        let comparison = try parseOperator()
        let options = try parseOptions()
        switch comparison {
        case .between:
            let values = try parseList()
            guard values.count == 2 else { throw error("BETWEEN takes two values: BETWEEN {1, 10}", at: operatorPosition) }
            return .comparison(attribute: attribute, operator: .between, options: options, values: values)
        case .in:
            let values = try parseList()
            guard !values.isEmpty else { throw error("IN takes at least one value: IN {\"JP\", \"FR\"}", at: operatorPosition) }
            return .comparison(attribute: attribute, operator: .in, options: options, values: values)
        default:
            var value = try parseLiteral()
            // A variable's value that reads as a number is still text where only text compares (`BEGINSWITH $P`
            // with P=1): the template's operator says what the value is.
            if [.beginsWith, .endsWith, .contains, .like, .matches].contains(comparison), case .number = value, let text = variableText {
                value = .string(text)
            }
            if value == .null && ![.equal, .notEqual].contains(comparison) {
                throw error("nil can only be compared with == or !=", at: operatorPosition)
            }
            if [.beginsWith, .endsWith, .contains, .like, .matches].contains(comparison), case .string = value {} else if
                [.beginsWith, .endsWith, .contains, .like, .matches].contains(comparison) {
                throw error("\(comparison.rawValue) compares text: give a string", at: operatorPosition)
            }
            if comparison == .matches, case .string(let pattern) = value, let problem = MatchesPatterns.problem(pattern, options: options.rawValue) {
                throw error("MATCHES needs a regular expression; '\(pattern)' is not one (\(problem)). "
                            + "Escape a special character with \\ to match it as itself, or compare plain text with CONTAINS or LIKE", at: operatorPosition)
            }
            return .comparison(attribute: attribute, operator: comparison, options: options, values: [value])
        }
    }

    mutating func parseOperator() throws(SearchIndexError) -> FilterPredicate.Operator {
        let symbols: [String: FilterPredicate.Operator] = ["==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual, "<": .less, "<=": .lessOrEqual,
                                                     "=<": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual, "=>": .greaterOrEqual]
        switch current.token {
        case .symbol(let symbol):
            guard let found = symbols[symbol] else { break }
            advance()
            return found
        case .identifier(let word):
            guard let found = FilterPredicate.Operator(rawValue: word.uppercased()), ![.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(found) else { break }
            advance()
            return found
        default:
            break
        }
        throw error("expected a comparison (== != < <= > >= BETWEEN IN BEGINSWITH ENDSWITH CONTAINS LIKE MATCHES), found \(describe(current.token))")
    }

    mutating func parseOptions() throws(SearchIndexError) -> FilterPredicate.Options {
        guard isSymbol("[") else { return [] }
        let start = current.position
        advance()
        guard case .identifier(let letters) = current.token, !letters.isEmpty, letters.lowercased().allSatisfy({ "cdn".contains($0) }) else {
            throw error("expected comparison options such as [c], [d] or [cd]", at: start)
        }
        advance()
        guard isSymbol("]") else { throw error("expected ']' after the options", at: start) }
        advance()
        var options: FilterPredicate.Options = []
        if letters.lowercased().contains("c") { options.insert(.caseInsensitive) }
        if letters.lowercased().contains("d") { options.insert(.diacriticInsensitive) }
        return options
    }
}
