/// Parses the `NSExpression` format subset Searchlight supports:
/// key paths (`name`, `country.name`), string (`'x'`, `"x"`) and number literals, `now()`,
/// `lowercase:(x)`, `uppercase:(x)`, `count:(x)`, `sum:(x)`, `min:(x)`, `max:(x)`, `average:(x)`, and
/// `FUNCTION(receiver, 'selector:', arguments…)`.
public enum ExpressionParser {
    /// The functions written `name:(…)`, with how many arguments each takes.
    static let namedFunctions: [String: Int] = [
        "lowercase": 1, "uppercase": 1, "count": 1, "sum": 1, "min": 1, "max": 1, "average": 1,
    ]

    /// The deepest nesting of function calls accepted: real configurations nest two or three deep, and
    /// a deeper expression would only exhaust the stack of the parser and of every evaluation.
    public static let maximumDepth = 32
    /// The most components a key path may have (`a.b.c` has three).
    public static let maximumKeyPathLength = 16
    /// The longest expression text accepted, in characters.
    public static let maximumLength = 10_000

    /// Parses one expression; a `FUNCTION` selector that `functions` does not have is an error at the
    /// selector's position.
    public static func parse(_ text: String, functions: FunctionRegistry = .standard) throws(ExpressionError) -> Expression {
        guard text.unicodeScalars.count <= maximumLength else {
            throw ExpressionError(expression: String(text.prefix(40)) + "…", position: maximumLength + 1,
                                  reason: "the expression is longer than \(maximumLength) characters")
        }
        var parser = Parser(text: text, functions: functions)
        let expression = try parser.expression()
        parser.skipSpaces()
        guard parser.index == parser.characters.count else { throw parser.error("unexpected '\(parser.characters[parser.index])' after the expression") }
        return expression
    }

    private struct Parser {
        let text: String
        let characters: [Character]
        let functions: FunctionRegistry
        var index = 0
        var depth = 0

        init(text: String, functions: FunctionRegistry) {
            self.text = text
            self.functions = functions
            characters = Array(text)
        }

        func error(_ reason: String) -> ExpressionError {
            ExpressionError(expression: text, position: index + 1, reason: reason)
        }

        mutating func skipSpaces() {
            while index < characters.count, characters[index].isWhitespace { index += 1 }
        }

        func peek() -> Character? { index < characters.count ? characters[index] : nil }

        mutating func expect(_ character: Character) throws(ExpressionError) {
            skipSpaces()
            guard peek() == character else { throw error(peek().map { "expected '\(character)', found '\($0)'" } ?? "expected '\(character)', found the end") }
            index += 1
        }

        mutating func expression() throws(ExpressionError) -> Expression {
            skipSpaces()
            guard let character = peek() else { throw error("expected an expression, found the end") }
            if character == "'" || character == "\"" { return .string(try string()) }
            if character.isNumber || character == "-" || character == "." { return try number() }
            if character.isLetter || character == "_" || character == "$" { return try identifierExpression() }
            throw error("unexpected '\(character)'")
        }

        mutating func string() throws(ExpressionError) -> String {
            let quote = characters[index]
            let start = index
            index += 1
            var value = ""
            while index < characters.count {
                let character = characters[index]
                if character == "\\" && index + 1 < characters.count {
                    let escaped = characters[index + 1]
                    value.append(escaped == "n" ? "\n" : escaped == "t" ? "\t" : escaped)
                    index += 2
                    continue
                }
                if character == quote { index += 1; return value }
                value.append(character)
                index += 1
            }
            index = start
            throw error("the string that starts here is not closed")
        }

        mutating func number() throws(ExpressionError) -> Expression {
            let start = index
            if peek() == "-" { index += 1 }
            while let character = peek(), character.isNumber || character == "." || character == "e" || character == "E" { index += 1 }
            guard let value = Double(String(characters[start..<index])) else {
                index = start
                throw error("'\(String(characters[start..<max(start + 1, index)]))' is not a number")
            }
            return .number(value)
        }

        mutating func identifier() throws(ExpressionError) -> String {
            skipSpaces()
            let start = index
            while let character = peek(), character.isLetter || character.isNumber || character == "_" || character == "$" { index += 1 }
            guard index > start else { throw error(peek().map { "expected a name, found '\($0)'" } ?? "expected a name, found the end") }
            return String(characters[start..<index])
        }

        mutating func arguments() throws(ExpressionError) -> [Expression] {
            try positionedArguments().map(\.expression)
        }

        /// The arguments in parentheses, each with the index of its first character.
        mutating func positionedArguments() throws(ExpressionError) -> [(start: Int, expression: Expression)] {
            try expect("(")
            depth += 1
            defer { depth -= 1 }
            guard depth <= ExpressionParser.maximumDepth else {
                throw error("functions are nested more than \(ExpressionParser.maximumDepth) deep")
            }
            skipSpaces()
            var arguments: [(start: Int, expression: Expression)] = []
            if peek() == ")" { index += 1; return arguments }
            while true {
                skipSpaces()
                let start = index
                arguments.append((start, try expression()))
                skipSpaces()
                if peek() == "," { index += 1; continue }
                try expect(")")
                return arguments
            }
        }

        mutating func identifierExpression() throws(ExpressionError) -> Expression {
            let start = index
            let name = try identifier()
            if name == "FUNCTION" {
                let arguments = try positionedArguments()
                guard arguments.count >= 2, case .string(let selector) = arguments[1].expression else {
                    index = start
                    throw error("FUNCTION needs a receiver and a selector string: FUNCTION(x, 'selector:', …)")
                }
                guard functions.function(selector) != nil else {
                    index = arguments[1].start
                    throw error("no function is registered for the selector '\(selector)'; registered: " + functions.selectors.joined(separator: ", "))
                }
                return .custom(selector: selector, receiver: arguments[0].expression, arguments: arguments.dropFirst(2).map(\.expression))
            }
            if name == "now" {
                skipSpaces()
                if peek() == "(" { _ = try arguments(); return .function(name: "now", arguments: []) }
            }
            skipSpaces()
            if peek() == ":" {
                index += 1
                guard let arity = ExpressionParser.namedFunctions[name] else {
                    index = start
                    throw error("unknown function '\(name):'; known: " + ExpressionParser.namedFunctions.keys.sorted().map { $0 + ":" }.joined(separator: ", ") + ", now(), FUNCTION(…)")
                }
                let arguments = try arguments()
                guard arguments.count == arity else {
                    index = start
                    throw error("\(name): takes \(arity) argument\(arity == 1 ? "" : "s"), got \(arguments.count)")
                }
                return .function(name: name, arguments: arguments)
            }
            var path = [name]
            while peek() == "." {
                index += 1
                path.append(try identifier())
                guard path.count <= ExpressionParser.maximumKeyPathLength else {
                    throw error("the key path has more than \(ExpressionParser.maximumKeyPathLength) parts")
                }
            }
            return .keyPath(path)
        }
    }
}
