/// NSPredicate's MATCHES: the whole text matches a regular expression, each pattern compiled once.
///
/// A filter may match one pattern against many texts: compiling it for each took 10 s (the time limit) for
/// `country MATCHES 'I[TE]'` over 939,632 places. The SQLite function `searchlight_matches` keeps one of
/// these per connection, and PostgreSQL's Swift check one per search, so both decide a pattern alike.
///
/// Not `Sendable`, as `Regex` is not: whoever keeps one keeps it to one thread at a time (behind a
/// connection's lock, or in one search's frame).
package struct MatchesPatterns {
    /// A pattern as compiled: `[d]` folds its diacritics (and the text's), `[c]` makes it ignore case.
    private struct Key: Hashable {
        var pattern: String
        var options: Int
    }

    /// The compiled expressions; `nil` for one that does not compile (it matches nothing).
    private var compiled: [Key: Regex<AnyRegexOutput>?] = [:]

    /// How many patterns are kept compiled: a saved search or a script uses a handful, and a stream of
    /// distinct patterns empties the cache rather than growing it without bound.
    static let capacity = 64

    /// An empty cache.
    package init() {}

    /// Whether all of `text` matches the regular expression `pattern` under `options` (`[c]` 1, `[d]` 2,
    /// as ``FilterPredicate/Options``); `false` when it does not compile.
    ///
    /// `[c]` compiles the pattern to ignore case rather than folding its text as other comparisons fold
    /// their literal: lowercased, `\D`, `\W`, `\S` and `\B` would turn into their opposites and `\Q…\E`
    /// would no longer compile. `[d]` folds the diacritics of both, as for every other comparison.
    package mutating func wholeMatch(_ text: String, pattern: String, options: Int = 0) -> Bool {
        let diacritics = options & FilterPredicate.Options.diacriticInsensitive.rawValue
        let key = Key(pattern: pattern, options: options)
        let regex: Regex<AnyRegexOutput>?
        if let kept = compiled[key] {
            regex = kept
        } else {
            if compiled.count >= Self.capacity { compiled.removeAll(keepingCapacity: true) }
            regex = Self.compile(SearchIndex.fold(pattern, options: diacritics),
                                 ignoringCase: options & FilterPredicate.Options.caseInsensitive.rawValue != 0)
            compiled[key] = .some(regex)
        }
        guard let regex else { return false }
        return (try? regex.wholeMatch(in: SearchIndex.fold(text, options: diacritics))) != nil
    }

    /// Why `pattern` does not compile as ``wholeMatch(_:pattern:options:)`` compiles it (the regular
    /// expression parser's own words: "expected ']'"), or nil when it does. `[d]` folds it first, and a range
    /// such as `[z-é]` may not survive that (`[z-e]`).
    package static func problem(_ pattern: String, options: Int) -> String? {
        do {
            _ = try Regex(SearchIndex.fold(pattern, options: options & FilterPredicate.Options.diacriticInsensitive.rawValue))
            return nil
        } catch {
            return String(describing: error)
        }
    }

    /// Compiles a pattern. Kept apart (never inlined) so that the fuzz script can name it: LeakSanitizer
    /// reports the trees of an expression still alive at exit, which it cannot follow.
    @inline(never)
    private static func compile(_ pattern: String, ignoringCase: Bool) -> Regex<AnyRegexOutput>? {
        guard let regex = try? Regex(pattern) else { return nil }
        return ignoringCase ? regex.ignoresCase() : regex
    }
}
