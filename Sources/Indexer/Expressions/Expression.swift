/// An expression in `NSExpression` format syntax, parsed: what an item's fields are computed from.
public indirect enum Expression: Sendable, Hashable, CustomStringConvertible {
    /// A key path through attributes and relationships, e.g. `country.name`.
    case keyPath([String])
    /// A string literal.
    case string(String)
    /// A number literal.
    case number(Double)
    /// A named function: `lowercase:(x)`, `count:(x)`, `now()`…
    case function(name: String, arguments: [Expression])
    /// `FUNCTION(receiver, 'selector:', arguments…)`: a function registered from Swift.
    case custom(selector: String, receiver: Expression, arguments: [Expression])

    public var description: String {
        switch self {
        case .keyPath(let path): path.joined(separator: ".")
        case .string(let text): "'" + text.replacingOccurrences(of: "'", with: "\\'") + "'"
        case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .function(let name, let arguments): name == "now" ? "now()" : "\(name):(\(arguments.map(\.description).joined(separator: ", ")))"
        case .custom(let selector, let receiver, let arguments):
            "FUNCTION(\(([receiver.description, "'\(selector)'"] + arguments.map(\.description)).joined(separator: ", ")))"
        }
    }

    /// Every key path the expression reads.
    public var keyPaths: [[String]] {
        switch self {
        case .keyPath(let path): [path]
        case .string, .number: []
        case .function(_, let arguments): arguments.flatMap(\.keyPaths)
        case .custom(_, let receiver, let arguments): receiver.keyPaths + arguments.flatMap(\.keyPaths)
        }
    }
}

/// Why an expression cannot be used, with the position (1-based character) where it went wrong.
public struct ExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The expression text.
    public var expression: String
    /// 1-based character position of the problem.
    public var position: Int
    /// What is wrong.
    public var reason: String

    public var description: String {
        "invalid expression '\(expression)' at character \(position): \(reason)"
    }
}
