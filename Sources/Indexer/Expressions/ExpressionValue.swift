import CoreDataStore
import Foundation

/// The value of an expression: scalars, or a list when a key path crosses a to-many relationship.
public enum ExpressionValue: Sendable, Hashable {
    /// No value.
    case null
    /// Text.
    case string(String)
    /// A number (integers, Booleans as 0/1, decimals).
    case number(Double)
    /// A date.
    case date(Date)
    /// Several values (a to-many key path).
    case list([ExpressionValue])

    init(_ value: AttributeValue) {
        switch value {
        case .null, .binary, .transformable: self = .null
        case .string(let text), .uri(let text): self = .string(text)
        case .integer(let number): self = .number(Double(number))
        case .boolean(let flag): self = .number(flag ? 1 : 0)
        case .double(let number), .decimal(let number): self = .number(number)
        case .date(let date): self = .date(date)
        case .uuid(let uuid): self = .string(uuid.uuidString)
        }
    }

    /// Scalars of the value, lists flattened.
    public var flattened: [ExpressionValue] {
        switch self {
        case .null: []
        case .list(let values): values.flatMap(\.flattened)
        default: [self]
        }
    }

    /// Text for search fields: every scalar, formatted.
    public var texts: [String] {
        flattened.compactMap { value in
            switch value {
            case .string(let text): text.isEmpty ? nil : text
            case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            case .date(let date): date.formatted(Date.ISO8601FormatStyle())
            default: nil
            }
        }
    }

    /// The first number, for coordinates and rank.
    public var number: Double? {
        for value in flattened { if case .number(let number) = value { return number } }
        return nil
    }

    /// The first date.
    public var date: Date? {
        for value in flattened { if case .date(let date) = value { return date } }
        return nil
    }
}

/// Functions `FUNCTION(receiver, 'selector:', …)` can call, registered from Swift.
public struct FunctionRegistry: Sendable {
    /// A function: receiver and arguments in, value out.
    public typealias Function = @Sendable (ExpressionValue, [ExpressionValue]) -> ExpressionValue

    private var functions: [String: Function]

    /// The built-ins: `stringByAppendingString:` (concatenation), `componentsJoinedByString:`, and
    /// `componentsSeparatedByString:`, which makes one string attribute holding a list (`"Roma, Rom,
    /// Rzym"`) several values, each scored on its own.
    public static let standard = FunctionRegistry(functions: [
        "stringByAppendingString:": { receiver, arguments in
            .string((receiver.texts + arguments.flatMap(\.texts)).joined())
        },
        "componentsJoinedByString:": { receiver, arguments in
            .string(receiver.texts.joined(separator: arguments.first?.texts.first ?? ", "))
        },
        "componentsSeparatedByString:": { receiver, arguments in
            guard let separator = arguments.first?.texts.first, !separator.isEmpty else { return .list(receiver.texts.map(ExpressionValue.string)) }
            return .list(receiver.texts.flatMap { $0.componentsSplit(by: separator) }.filter { !$0.isEmpty }.map(ExpressionValue.string))
        },
    ])

    /// Adds or replaces a function.
    public mutating func register(_ selector: String, _ function: @escaping Function) {
        functions[selector] = function
    }

    /// The function for a selector.
    public func function(_ selector: String) -> Function? { functions[selector] }

    /// Every registered selector.
    public var selectors: [String] { functions.keys.sorted() }
}

/// Evaluates expressions over a batch of objects fetched in bulk: key paths are lookups in the
/// batch's object graph, never queries.
struct ExpressionEvaluator {
    let graph: [ManagedObjectID: ManagedObjectSnapshot]
    let functions: FunctionRegistry
    /// The display name of a related object, for key paths that end on a relationship.
    let displayName: (ManagedObjectSnapshot) -> String?
    let now: Date

    func evaluate(_ expression: Expression, on object: ManagedObjectSnapshot) -> ExpressionValue {
        switch expression {
        case .string(let text): return .string(text)
        case .number(let number): return .number(number)
        case .keyPath(let path): return value(of: path[...], on: [object], toMany: false)
        case .function(let name, let arguments):
            let argument = arguments.first.map { evaluate($0, on: object) } ?? .null
            switch name {
            case "now": return .date(now)
            case "lowercase": return Self.map(argument) { .string($0.lowercased()) }
            case "uppercase": return Self.map(argument) { .string($0.uppercased()) }
            case "count": return .number(Double(argument.flattened.count))
            case "sum": return .number(argument.flattened.compactMap(\.number).reduce(0, +))
            case "min": return argument.flattened.compactMap(\.number).min().map(ExpressionValue.number) ?? .null
            case "max": return argument.flattened.compactMap(\.number).max().map(ExpressionValue.number) ?? .null
            case "average":
                let numbers = argument.flattened.compactMap(\.number)
                return numbers.isEmpty ? .null : .number(numbers.reduce(0, +) / Double(numbers.count))
            default: return .null
            }
        case .custom(let selector, let receiver, let arguments):
            guard let function = functions.function(selector) else { return .null }
            return function(evaluate(receiver, on: object), arguments.map { evaluate($0, on: object) })
        }
    }

    private static func map(_ value: ExpressionValue, _ transform: (String) -> ExpressionValue) -> ExpressionValue {
        switch value {
        case .string(let text): transform(text)
        case .list(let values): .list(values.map { map($0, transform) })
        default: value
        }
    }

    /// Key-path tails already walked from one object, by object and tail: every place of a country
    /// shares `country.places.name`, so it is walked once per country and batch, not once per place.
    final class Memo {
        var values: [ManagedObjectID: [ArraySlice<String>: ExpressionValue]] = [:]
    }
    let memo = Memo()

    /// Walks a key path from a set of objects; becomes a list once a to-many relationship is crossed.
    /// Each hop reaches every object once, as key-value coding on sets does, so even a cyclic path
    /// (`country.places.country.places.name`) costs at most the objects it passes, not their product.
    private func value(of path: ArraySlice<String>, on objects: [ManagedObjectSnapshot], toMany: Bool) -> ExpressionValue {
        guard let name = path.first else { return .null }
        if objects.count == 1, !toMany, path.count > 1, let destination = objects[0].toOne[name], let related = graph[destination] {
            let tail = path.dropFirst()
            if let known = memo.values[destination]?[tail] { return known }
            let result = value(of: tail, on: [related], toMany: false)
            memo.values[destination, default: [:]][tail] = result
            return result
        }
        var values: [ExpressionValue] = []
        var next: [ManagedObjectSnapshot] = []
        var reached: Set<ManagedObjectID> = []
        var crossedToMany = toMany
        func reach(_ destination: ManagedObjectID) {
            guard reached.insert(destination).inserted, let related = graph[destination] else { return }
            next.append(related)
        }
        for object in objects {
            if let attribute = object.attributes[name] {
                values.append(ExpressionValue(attribute))
            } else if let destination = object.toOne[name] {
                reach(destination)
            } else if let destinations = object.toMany[name] {
                crossedToMany = true
                destinations.forEach(reach)
            }
        }
        if path.count > 1 { return value(of: path.dropFirst(), on: next, toMany: crossedToMany) }
        if !next.isEmpty { values += next.compactMap(displayName).map(ExpressionValue.string) }
        if crossedToMany { return .list(values) }
        return values.first ?? .null
    }
}
