import ArgumentParser
import CoreDataStore

/// `searchctl history`: the store's persistent-history transactions.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List a store's persistent-history transactions, oldest first.",
        discussion: """
            One JSON object per transaction with its changes. updatedProperties comes from ACHANGE.ZCOLUMNS, \
            whose bit order Apple does not document: treat it as a hint.

            Example:
              searchctl history --store Places.sqlite --after 120 --limit 5
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case jsonl, table
    }

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "Only transactions after this transaction number (a history token).")
    var after: Int64 = 0

    @Option(help: "At most this many transactions.")
    var limit: Int?

    @Option(help: "Output format: jsonl or table.")
    var format: Format = .jsonl

    func validate() throws {
        if after < 0 { throw ValidationError("--after must be 0 or a transaction number") }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        do {
            let store = try storeOptions.open()
            guard store.hasHistory else { throw CoreDataStoreError.historyNotTracked(path: store.path) }
            var table = TextTable(headers: ["TRANSACTION", "TIMESTAMP", "BUNDLE", "PROCESS", "AUTHOR", "INSERTS", "UPDATES", "DELETES"], shrinkable: [2, 4, 3])
            var token = after
            var remaining = limit ?? Int.max
            // Page through history so memory stays bounded however long it is.
            while remaining > 0 {
                let page = try store.transactions(after: token, limit: min(remaining, 100))
                guard let last = page.last else { break }
                for transaction in page {
                    switch format {
                    case .jsonl:
                        print(transaction.json.compact)
                    case .table:
                        let counts = Dictionary(grouping: transaction.changes, by: \.type).mapValues(\.count)
                        table.rows.append([
                            String(transaction.number), transaction.timestamp.iso8601, transaction.bundleID ?? "",
                            transaction.processID ?? "", transaction.author ?? "", String(counts[.insert] ?? 0),
                            String(counts[.update] ?? 0), String(counts[.delete] ?? 0),
                        ])
                    }
                }
                token = last.number
                remaining -= page.count
            }
            if format == .table { print(table.renderForStandardOutput()) }
        } catch {
            throw fail(error)
        }
    }
}
