extension SearchRequest {
    /// Why a request cannot be searched, as facts a caller can branch on or put in its own words.
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// Where an attribute was named.
        public enum AttributeUse: String, Sendable, Equatable {
            case sort, facet
        }

        /// No words, no center, no box and no filter: nothing to search for.
        case nothingToSearch
        /// A radius without a center.
        case radiusWithoutCenter
        /// Sorting by relevance with no words to be relevant to.
        case relevanceWithoutWords
        /// A page of fewer than one hit.
        case limitBelowOne
        /// A page starting before the first hit.
        case negativeOffset
        /// An attribute no item carries; `known` are those items carry (empty: the configuration declares none).
        case unknownAttribute(name: String, use: AttributeUse, known: [String])
        /// An order that is not `relevance`, `distance` or `ATTRIBUTE[:asc|:desc]`.
        case invalidSort(String)
        /// A saved search run without a value for one of its variables (`$name`).
        case missingVariable(search: String, name: String, variables: [String])
        /// A value for a variable the saved search does not have.
        case unknownVariable(search: String, name: String, variables: [String])
        /// An entity outside the ones a saved search searches.
        case entityOutsideSavedSearch(search: String, entity: String, entities: [String])
        /// No saved search has this name; `known` are those the index has.
        case unknownSavedSearch(name: String, known: [String])

        public var description: String {
            switch self {
            case .nothingToSearch: "give words to search for, a center, a box or a filter"
            case .radiusWithoutCenter: "a radius needs a center to measure from"
            case .relevanceWithoutWords: "sorting by relevance needs words to search for"
            case .limitBelowOne: "the limit must be at least 1"
            case .negativeOffset: "the offset must be 0 or more"
            case .unknownAttribute(let name, let use, let known):
                known.isEmpty
                    ? "\(use.rawValue) by \(name): the index's configuration declares no attributes; "
                        + "add \"attributes\": {\"\(name)\": \"keyPath\"} to the entity in the configuration and index again"
                    : "\(use.rawValue) by \(name): no item has that attribute; the index has \(known.joined(separator: ", "))"
            case .invalidSort(let text):
                "an order is relevance, distance or ATTRIBUTE[:asc|:desc] (population:desc); got '\(text)'"
            case .missingVariable(let search, let name, let variables):
                "the saved search '\(search)' needs a value for $\(name)" + Self.takes(variables)
            case .unknownVariable(let search, let name, let variables):
                "the saved search '\(search)' has no $\(name); " + (variables.isEmpty ? "it takes no variables" : "it takes " + Self.list(variables))
            case .entityOutsideSavedSearch(let search, let entity, let entities):
                "the saved search '\(search)' searches \(entities.joined(separator: ", ")); \(entity) is not one of them"
            case .unknownSavedSearch(let name, let known):
                known.isEmpty
                    ? "no saved search '\(name)': the index's configuration declares none; "
                        + "add \"searches\": {\"\(name)\": {\"where\": \"…\"}} to the configuration and index again"
                    : "no saved search '\(name)'; the index has " + known.joined(separator: ", ")
            }
        }

        static func list(_ variables: [String]) -> String { variables.map { "$" + $0 }.joined(separator: ", ") }

        static func takes(_ variables: [String]) -> String { variables.count > 1 ? " (it takes " + list(variables) + ")" : "" }
    }
}
