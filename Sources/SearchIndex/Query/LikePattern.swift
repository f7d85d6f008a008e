/// NSPredicate's LIKE pattern, read once: `*` any run of scalars, `?` one scalar, a backslash taking the next
/// scalar literally (a trailing one is dropped).
///
/// Scalar by scalar, as SQLite's GLOB and PostgreSQL's LIKE read their patterns: a backslash or bracket
/// followed by a combining mark is one `Character` but two of their characters. Every backend writes the
/// same elements in its own dialect (``glob``, PostgreSQL's LIKE) and Swift matches them (``matches(_:)``),
/// so a filter keeps the same items wherever it is decided.
package struct LikePattern: Sendable, Equatable {
    /// One element of the pattern.
    package enum Element: Sendable, Equatable {
        /// This scalar, literally.
        case scalar(Unicode.Scalar)
        /// Any one scalar (`?`).
        case one
        /// Any run of scalars, empty or not (`*`).
        case any
    }

    /// The pattern's elements, in order.
    package let elements: [Element]

    /// Reads an NSPredicate LIKE pattern.
    package init(_ pattern: String) {
        var elements: [Element] = []
        var escaped = false
        for scalar in pattern.unicodeScalars {
            if escaped {
                elements.append(.scalar(scalar))
                escaped = false
                continue
            }
            switch scalar {
            case "\\": escaped = true
            case "*": elements.append(.any)
            case "?": elements.append(.one)
            default: elements.append(.scalar(scalar))
            }
        }
        self.elements = elements
    }

    /// The pattern as SQLite's GLOB reads it: a literal `[`, `]`, `*` or `?` as a one-character class.
    var glob: String {
        var result = ""
        for element in elements {
            switch element {
            case .any: result += "*"
            case .one: result += "?"
            case .scalar(let scalar) where "[]*?".unicodeScalars.contains(scalar): result += "[\(scalar)]"
            case .scalar(let scalar): result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `text` matches, scalar by scalar, as GLOB with ``glob`` decides.
    func matches(_ text: [Unicode.Scalar]) -> Bool {
        // Greedy with one backtrack point: the last `*` seen (linear in practice, never exponential).
        var (e, s) = (0, 0)
        var star: (element: Int, scalar: Int)?
        while s < text.count {
            if e < elements.count, elements[e] == .one || elements[e] == .scalar(text[s]) {
                e += 1
                s += 1
            } else if e < elements.count, elements[e] == .any {
                star = (e, s)
                e += 1
            } else if let last = star {
                star = (last.element, last.scalar + 1)
                (e, s) = (last.element + 1, last.scalar + 1)
            } else {
                return false
            }
        }
        while e < elements.count, elements[e] == .any { e += 1 }
        return e == elements.count
    }
}
