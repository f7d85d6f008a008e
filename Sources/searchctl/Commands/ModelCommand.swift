import ArgumentParser
import CoreDataStore

/// `searchctl model`: the model as Searchlight sees it, and where it came from.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Show a store's Core Data model and where it came from.",
        discussion: """
            The model comes from the store's own Z_MODELCACHE (exactly what wrote the store), else from --model, \
            else it is inferred from the tables (reported as source "schema").

            Example:
              searchctl model --store Places.sqlite --format text
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, text
    }

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "Output format: json or text.")
    var format: Format = .json

    func run() throws {
        do {
            let store = try storeOptions.open()
            switch format {
            case .json: print(store.model.json(store: store).pretty)
            case .text: print(store.model.text(store: store))
            }
        } catch {
            throw fail(error)
        }
    }
}
