import CoreDataStore
import Foundation

/// Fuzzes the `.xcdatamodel/contents` XML loader.
///
/// A loaded model is then used as the reader uses it (entity numbers, `ZCOLUMNS` order, tombstones).
enum ModelXMLTarget {
    static let target = FuzzTarget(name: "modelxml") { data in
        // Known, fix pending (disabled test "a model file that is not UTF-8 is refused, not a crash" in
        // CoreDataStoreTests/FuzzRegressionTests.swift): in recovery mode libxml2 hands FoundationXML element and
        // attribute names, comments and processing instructions that are not UTF-8, and FoundationXML force-unwraps
        // their decoding (`UTF8STRING(localname)!`), which traps.
        guard String(validating: data, as: UTF8.self) != nil else { return }
        guard let model = try? ManagedObjectModel(modelFileXML: data) else { return }
        use(model)
    }

    /// Asks a decoded model what opening a store asks it: hierarchy walks must end on any accepted model.
    static func use(_ model: ManagedObjectModel) {
        _ = model.entityNumbers
        for entity in model.entities {
            _ = model.historyColumnOrder(of: entity.name)
            _ = model.tombstoneAttributes(of: entity.name)
        }
    }
}
