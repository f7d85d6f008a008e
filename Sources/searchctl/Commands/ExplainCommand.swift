import ArgumentParser
import Foundation
import SearchIndex

/// `searchctl explain`: how a search would run, without the guesswork.
struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show how a search runs: the parsed query, the plan, the SQL and the database's query plan.",
        discussion: """
            Takes exactly the options of search. The search really runs (read-only), so the plan shown is the \
            one chosen for this index's statistics.

            Examples:
              searchctl explain park --near 40.71,-74.0 --radius 50km --store Places.sqlite
              searchctl explain '"new york"' --store Places.sqlite --format json
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @OptionGroup var options: SearchOptions

    @Option(help: "text or json.")
    var format: Format = .text

    func run() throws {
        do {
            let index = try options.location.open()
            let explanation = try index.explain(try options.request(in: index))
            switch format {
            case .json: print(explanation.json.pretty)
            case .text: print(Self.text(explanation))
            }
        } catch {
            throw fail(error)
        }
    }

    static func text(_ explanation: SearchExplanation) -> String {
        var lines = [
            "query: " + (explanation.parsedQuery.map(\.description) ?? "(none: search by place)"),
            "\(explanation.expressionLanguage.rawValue): " + (explanation.expression ?? "(none)"),
            "plan: \(explanation.plan.rawValue) — \(explanation.plan.summary(for: explanation.expressionLanguage))",
            "hits: \(explanation.hitCount)",
        ]
        for (number, statement) in explanation.statements.enumerated() {
            lines.append("")
            lines.append("statement \(number + 1):")
            lines += statement.sql.split(separator: "\n").map { "  " + Self.shortened(sql: $0.trimmingCharacters(in: .whitespaces)) }
            if statement.arguments != "[]" {
                let parameters = statement.sql.filter { $0 == "?" }.count
                let arguments = statement.arguments.count > 160 ? statement.arguments.prefix(160) + "… (\(parameters) values)" : statement.arguments
                lines.append("  arguments: " + arguments)
            }
            lines.append("  query plan:")
            lines += statement.queryPlan.map { "    " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}

extension ExplainCommand {
    /// `IN (?, ?, …)` lists of candidate ids run to hundreds of parameters: people see their length instead
    /// (`--format json` keeps everything).
    static func shortened(sql: String) -> String {
        var result = sql
        let list = "?, "
        while let start = result.range(of: "(" + String(repeating: list, count: 4)) {
            var end = start.upperBound
            var count = 4
            while result[end...].hasPrefix(list) { end = result.index(end, offsetBy: list.count); count += 1 }
            guard result[end...].hasPrefix("?)") else { break }
            result.replaceSubrange(start.lowerBound..<result.index(end, offsetBy: 2), with: "(?, ?, ?, … \(count + 1) parameters)")
        }
        return result
    }
}

extension SearchPlan {
    /// One line on what the plan does on a backend, for people.
    func summary(for language: SearchExplanation.ExpressionLanguage) -> String {
        if language == .tsquery {
            // PostgreSQL narrows rows down with its indexes; Searchlight's ranking scores every row it returns.
            return switch self {
            case .text: "GIN finds the rows holding the words; each is scored by Searchlight's ranking"
            case .nearest: "GiST circles growing around the point, refined by exact distance"
            case .intersection: "the words within growing GiST circles, nearest first"
            default: "GIN for the words and GiST for the place in one statement, refined by exact distance"
            }
        }
        return switch self {
        case .text: "FTS5 alone, ranked and paged in SQL"
        case .nearest: "R-tree circles growing around the point, refined by exact distance"
        case .textThenPlace: "FTS5 matches first, then the place filter (the words are rarer)"
        case .placeThenText: "R-tree candidates first, each checked and scored from its term vector (the place is rarer)"
        case .intersection: "R-tree ids first, then one FTS5 scan scoring only those rows"
        case .filter: "the attribute filter alone, most important items first"
        case .placedList: "the word's best rows with their places, best first, scored in the region until none further down can reach the page"
        case .placedRows: "the rows of the word and its typo expansions in the region, from their complete placed lists and FTS5, scored (nearest first: the nearest only)"
        case .frequentAlternative: "the rare alternatives' rows in the region scored by the whole group, the frequent one's best rows from its placed list"
        case .typoTiers: "the region's rows of the word as typed, then of each tier of its typo expansions searched alone (a frequent one from its placed list)"
        }
    }
}
