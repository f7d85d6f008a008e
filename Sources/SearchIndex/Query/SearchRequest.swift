/// What to search for: words and/or a place, filters, order and page.
public struct SearchRequest: Sendable, Hashable {
    /// How hits are ordered.
    public enum Sort: String, Sendable, Hashable, CaseIterable {
        /// Best text match first (rank lifts near-ties); needs a query.
        case relevance
        /// Nearest first; needs `near` or a box (whose center is then the reference point).
        case distance
    }

    /// Plain-language text (see ``QueryParser``), or nil to search by place alone.
    public var query: String?
    /// Only these entities (empty: all).
    public var entities: [String]
    /// The reference point for distances, radius and nearest-first order.
    public var near: Coordinate?
    /// Keep hits within this great-circle distance of `near`, in meters.
    public var radius: Double?
    /// Keep hits inside this box.
    public var boundingBox: BoundingBox?
    /// The order; nil means relevance with a query and distance without one.
    public var sort: Sort?
    /// Hits per page.
    public var limit: Int
    /// Hits to skip.
    public var offset: Int
    /// Whether hits carry a snippet with the matches marked.
    public var snippets: Bool
    /// A filter over the items' attributes in `NSPredicate` format (see the query language in DESIGN.md):
    /// `population > 1000000 AND country == "JP"`.
    public var filter: String?
    /// Values of the filter's `$VARIABLES`, for a saved search's predicate (see ``SavedSearch``).
    public var filterVariables: [String: String]?
    /// Orders hits by an attribute instead (`population:desc`); items without it come last.
    public var sortAttribute: AttributeOrder?
    /// Attributes whose values are counted over every match, not only this page (`country`).
    public var facets: [String] = []
    /// Whether the query's last word is a prefix (search as you type): `san fr` finds San Francisco. A
    /// query ending with a space or a closing quote, or whose last term excludes, is taken as typed.
    public var lastWordIsPrefix = false
    /// Whether words may match terms a few edits away (`zurch` finds Zürich), ranked below exact matches;
    /// off, every word matches only as typed. Words of 5 or more letters match with one edit, of 9 or more with
    /// two; the first letter and words with a digit match only as typed.
    public var typoTolerance = true
    /// Whether ``entities`` match only items of exactly those entities; by default their sub-entities match
    /// too, as a Core Data fetch does.
    public var exactEntities = false
    /// How long the search may run before it is stopped with ``SearchIndexError/searchTooExpensive(seconds:)``:
    /// a search never holds its read transaction (and the writer's WAL) longer than this.
    public var timeLimit: Double = SearchRequest.defaultTimeLimit
    /// Ten seconds: a hundred times the slowest ordinary query of the benchmark at 940 k items.
    public static let defaultTimeLimit = 10.0
    /// Whether the results carry ``SearchResults/total``, every match counted (typo matches included), from
    /// the same read transaction as the page.
    public var countsTotal = false
    /// A plan to run instead of the planner's choice (words with a place: ``SearchPlan/textThenPlace``,
    /// ``SearchPlan/placeThenText`` or ``SearchPlan/intersection``): tests check that every plan gives the
    /// same answer, and `searchbench plans` times each against the planner's choice.
    public var forcedPlan: SearchPlan?
    /// Whether a search may use the leader lists: a one-word search answers from its term's list, a word
    /// with typo expansions from theirs tier by tier, and the ranking takes listed terms' row counts from
    /// them (on by default; tests and `searchbench` turn it off to compare with scoring every match, which
    /// gives the same page).
    public var usesTermLeaders = true

    /// Creates a request.
    public init(query: String? = nil, entities: [String] = [], near: Coordinate? = nil, radius: Double? = nil,
                boundingBox: BoundingBox? = nil, sort: Sort? = nil, limit: Int = 20, offset: Int = 0, snippets: Bool = false) {
        self.query = query
        self.entities = entities
        self.near = near
        self.radius = radius
        self.boundingBox = boundingBox
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.snippets = snippets
        self.forcedPlan = nil
    }

    /// The same search without paging or snippets, for counts and facets over every match.
    var unpaged: SearchRequest {
        var unpaged = self
        (unpaged.limit, unpaged.offset, unpaged.snippets, unpaged.sortAttribute) = (Int.max, 0, false, nil)
        return unpaged
    }

    /// The order actually used.
    public var effectiveSort: Sort { sort ?? (query == nil && (near != nil || boundingBox != nil) ? .distance : .relevance) }
}

/// One result.
public struct SearchHit: Sendable, Hashable {
    /// The item's URI (the deep link).
    public var uri: String
    /// The item's entity.
    public var entity: String
    /// The item's display name.
    public var displayName: String
    /// Relevance, higher is better (0 for searches by place alone).
    public var score: Double
    /// Exact latitude, when the item has a place.
    public var latitude: Double?
    /// Exact longitude, when the item has a place.
    public var longitude: Double?
    /// Great-circle distance from `near` in meters, when `near` was given.
    public var distance: Double?
    /// The text around the matches, marked with `[` `]`, when snippets were asked for.
    public var snippet: String?
    /// Edits between the words typed and the terms this hit matched (0: matched as typed); hits with
    /// fewer typos always rank first.
    public var typos = 0

    /// A hit found by another backend.
    package init(uri: String, entity: String, displayName: String, score: Double, latitude: Double?, longitude: Double?,
                 distance: Double?, snippet: String?) {
        self.uri = uri
        self.entity = entity
        self.displayName = displayName
        self.score = score
        self.latitude = latitude
        self.longitude = longitude
        self.distance = distance
        self.snippet = snippet
    }
}

/// How a search was carried out, for `explain` and tests.
public enum SearchPlan: String, Sendable, Hashable {
    /// FTS5 alone, ordered and paged in SQL.
    case text
    /// R-tree alone: expanding circles around the reference point, refined exactly.
    case nearest
    /// FTS5 matches first, then the place filter (the words are rarer than the places).
    case textThenPlace = "text-then-place"
    /// Places first, each checked and scored from its term vector, without FTS5 (the place is far more
    /// selective than the words).
    case placeThenText = "place-then-text"
    /// The region's R-tree ids first, then one FTS5 scan that keeps, joins and scores only those rows.
    case intersection
    /// Attributes alone (a filter without words or a place): the filter's items, most important first.
    case filter
    /// One frequent word, prefix or phrase within a wide region, or near a point at any distance: its placed
    /// list's rows best first, those in the region scored from their term vectors, until no row further down
    /// can reach the page.
    case placedList = "placed-list"
    /// A word with its typo expansions (or alternatives) within a region, or nearest first: the rows they hold
    /// there, from their complete placed lists (and FTS5 for rare ones), scored from their term vectors (nearest
    /// first, only the nearest).
    case placedRows = "placed-rows"
    /// A word with its typo expansions (or alternatives) within a region, tier by tier: the rows of the words as
    /// typed, then those of each tier of expansions searched alone (a frequent one from its placed list), the
    /// rows of the tiers before left out.
    case typoTiers = "typo-tiers"
    /// A group of alternatives within a region, one of them frequent: the rare ones' rows there scored by the
    /// whole group, and the frequent one's best rows from a search of it alone (its placed list).
    case frequentAlternative = "frequent-alternative"
}

/// An order by one attribute: its lowest value first, or its highest with `descending`.
public struct AttributeOrder: Sendable, Hashable {
    /// The attribute's name, as the configuration declares it.
    public var name: String
    /// Highest first.
    public var descending: Bool

    /// Creates an order.
    public init(name: String, descending: Bool) {
        self.name = name
        self.descending = descending
    }
}

/// The values of one attribute over every match of a search, with how many matches carry each.
public struct Facet: Sendable, Hashable {
    /// One value and its count.
    public struct Value: Sendable, Hashable {
        /// The value as text (numbers plainly, dates ISO-8601).
        public var value: String
        /// Matches carrying it.
        public var count: Int
    }

    /// The attribute.
    public var name: String
    /// Values, the most frequent first (ties by value).
    public var values: [Value]
}

/// A page of results.
public struct SearchResults: Sendable {
    /// The hits, best first; ties broken by URI.
    public var hits: [SearchHit]
    /// The plan used.
    public var plan: SearchPlan
    /// The parsed query, when there was one.
    public var parsedQuery: ParsedQuery?
    /// The requested facets, in the order asked.
    public var facets: [Facet] = []
    /// When nothing matched: the query with its unmatched words replaced by the index's nearest terms.
    public var suggestion: QuerySuggestion?
    /// Every match, not only this page, when the request asked (``SearchRequest/countsTotal``).
    public var total: Int?

    /// Results of another backend.
    package init(hits: [SearchHit], plan: SearchPlan, parsedQuery: ParsedQuery?) {
        self.hits = hits
        self.plan = plan
        self.parsedQuery = parsedQuery
    }
}
