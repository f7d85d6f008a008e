/// NSPredicate's MATCHES: the whole text matches a regular expression, each pattern compiled once.
///
/// A filter may match one pattern against many texts: compiling it for each took 10 s (the time limit) for
/// `country MATCHES 'I[TE]'` over 939,632 places. The SQLite function `searchlight_matches` keeps one of
/// these per connection, and PostgreSQL's Swift check one per search, so both decide a pattern alike.
///
/// Not `Sendable`, as `Regex` is not: whoever keeps one keeps it to one thread at a time (behind a
/// connection's lock, or in one search's frame).
package struct MatchesPatterns {
    /// The compiled expressions, by pattern; `nil` for one that does not compile (it matches nothing).
    private var compiled: [String: Regex<AnyRegexOutput>?] = [:]

    /// How many patterns are kept compiled: a saved search or a script uses a handful, and a stream of
    /// distinct patterns empties the cache rather than growing it without bound.
    static let capacity = 64

    /// An empty cache.
    package init() {}

    /// Whether all of `text` matches the regular expression `pattern`; `false` when it does not compile.
    package mutating func wholeMatch(_ text: String, pattern: String) -> Bool {
        let regex: Regex<AnyRegexOutput>?
        if let kept = compiled[pattern] {
            regex = kept
        } else {
            if compiled.count >= Self.capacity { compiled.removeAll(keepingCapacity: true) }
            regex = try? Regex(pattern)
            compiled[pattern] = .some(regex)
        }
        guard let regex else { return false }
        return (try? regex.wholeMatch(in: text)) != nil
    }
}
