import CoreDataStore
import Foundation
import Indexer

/// Fuzzes the configuration loader against the Places model, and the expression parser on the same bytes.
///
/// Invariants: loading and resolving return or throw; a configuration that resolves prints (`--print-config`)
/// as JSON that loads again and resolves to the same plans (equal digests), as DESIGN promises of that output.
enum ConfigurationTarget {
    /// The Corpus's own model, read from the repository this file is in.
    static let model: ManagedObjectModel = {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("Corpus/Places.xcdatamodeld").path
        do {
            return try ManagedObjectModel(contentsOf: path)
        } catch {
            fatalError("searchlight-fuzz: cannot load the Places model at \(path): \(error)")
        }
    }()

    static let target = FuzzTarget(name: "config", prepare: { _ = model }) { data in
        _ = try? ExpressionParser.parse(String(decoding: data, as: UTF8.self))
        guard let configuration = try? IndexConfiguration(json: data),
              let resolved = try? ResolvedConfiguration(configuration, model: model)
        else { return }
        let printed = resolved.effective.json
        let reloaded: ResolvedConfiguration
        do {
            reloaded = try ResolvedConfiguration(IndexConfiguration(json: Data(printed.utf8)), model: model)
        } catch {
            fatalError("the effective configuration does not load again: \(error)\n\(printed)")
        }
        guard reloaded.digest == resolved.digest else {
            fatalError("the effective configuration resolves to other plans when loaded again:\n\(printed)")
        }
    }
}
