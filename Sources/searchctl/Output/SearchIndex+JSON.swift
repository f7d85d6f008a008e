import SearchIndex

extension SearchHit {
    /// Every key in every hit, `null` when absent (no location, no `--near`, no `--snippets`): a script
    /// reads one shape.
    var json: JSONValue {
        let located = latitude != nil && longitude != nil
        return .object([
            ("uri", .string(uri)), ("entity", .string(entity)), ("displayName", .string(displayName)), ("score", .double(score)),
            ("latitude", located ? latitude.map(JSONValue.double) ?? .null : .null),
            ("longitude", located ? longitude.map(JSONValue.double) ?? .null : .null),
            ("distanceMeters", distance.map { .double($0.rounded()) } ?? .null),
            ("snippet", .optional(snippet)),
            ("typos", .int(Int64(typos))),
        ])
    }
}

extension SearchExplanation {
    var json: JSONValue {
        .object([
            ("query", .optional(parsedQuery?.description)),
            // Every key on every backend, null where it does not apply: one shape for scripts.
            ("fts5", .optional(expressionLanguage == .fts5 ? expression : nil)),
            ("tsquery", .optional(expressionLanguage == .tsquery ? expression : nil)),
            ("plan", .string(plan.rawValue)),
            ("hits", .int(Int64(hitCount))),
            ("statements", .array(statements.map { statement in
                .object([("sql", .string(statement.sql)), ("arguments", .string(statement.arguments)),
                         ("queryPlan", .array(statement.queryPlan.map(JSONValue.string)))])
            })),
        ])
    }
}
