/// Values by property name, stored as an array against a key table shared by every object of an
/// entity: building one costs one allocation and no hashing, which matters when a fetch decodes
/// hundreds of thousands of objects. Reads like a dictionary; `nil` entries count as absent.
public struct NamedValues<Value: Sendable & Hashable>: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The names of one layout and their positions; shared, never mutated after creation.
    final class Keys: Sendable {
        let names: [String]
        let positions: [String: Int]

        init(_ names: [String]) {
            self.names = names
            positions = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private var keys: Keys
    private var values: [Value?]

    init(keys: Keys, values: [Value?]) {
        self.keys = keys
        self.values = values
    }

    /// Creates values from a dictionary.
    public init(_ dictionary: [String: Value]) {
        let names = dictionary.keys.sorted()
        keys = Keys(names)
        values = names.map { dictionary[$0] }
    }

    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The value for a name, or nil when absent.
    public subscript(name: String) -> Value? {
        get { keys.positions[name].flatMap { values[$0] } }
        set {
            if let position = keys.positions[name] {
                values[position] = newValue
            } else if let newValue {
                keys = Keys(keys.names + [name]) // a name outside the layout: extend a private copy
                values.append(newValue)
            }
        }
    }

    /// The names that have a value, in layout order.
    public var names: [String] { zip(keys.names, values).compactMap { $1 == nil ? nil : $0 } }

    /// How many names have a value.
    public var count: Int { values.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// Whether no name has a value.
    public var isEmpty: Bool { count == 0 }

    /// The entries as a dictionary.
    public var dictionary: [String: Value] {
        Dictionary(map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: Value)> {
        zip(keys.names, values).lazy.compactMap { name, value in value.map { (key: name, value: $0) } }.makeIterator()
    }

    public static func == (lhs: NamedValues, rhs: NamedValues) -> Bool {
        if lhs.keys === rhs.keys { return lhs.values == rhs.values }
        return lhs.dictionary == rhs.dictionary
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count) // order-independent, consistent with ==
    }
}
