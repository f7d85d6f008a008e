import ArgumentParser
import CoreDataStore

/// `--store` and `--model`, shared by the commands that read a Core Data store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The app's Core Data store (.sqlite); opened read-only.", valueName: "path"))
    var store: String

    @Option(name: .long, help: ArgumentHelp(
        "A model to read the store with instead of its own Z_MODELCACHE: a .xcdatamodeld bundle, a .xcdatamodel folder or its contents file.",
        valueName: "path"))
    var model: String?

    /// Opens the store, printing what a user should know about the model choice.
    func open() throws(CoreDataStoreError) -> PersistentStore {
        let opened = try PersistentStore(path: store, modelPath: model)
        for note in opened.notes { printNote(IndexReporter.describe(.store(path: store, note))) }
        return opened
    }
}
