import SearchIndex

extension SearchHit {
    var json: JSONValue {
        var members: [(String, JSONValue)] = [("uri", .string(uri)), ("entity", .string(entity)), ("displayName", .string(displayName)), ("score", .double(score))]
        if let latitude, let longitude { members += [("latitude", .double(latitude)), ("longitude", .double(longitude))] }
        if let distance { members.append(("distanceMeters", .double(distance.rounded()))) }
        if let snippet { members.append(("snippet", .string(snippet))) }
        return .object(members)
    }
}

extension SearchExplanation {
    var json: JSONValue {
        .object([
            ("query", .optional(parsedQuery?.description)),
            ("fts5", .optional(expression)),
            ("plan", .string(plan.rawValue)),
            ("hits", .int(Int64(hitCount))),
            ("statements", .array(statements.map { statement in
                .object([("sql", .string(statement.sql)), ("arguments", .string(statement.arguments)),
                         ("queryPlan", .array(statement.queryPlan.map(JSONValue.string)))])
            })),
        ])
    }
}
