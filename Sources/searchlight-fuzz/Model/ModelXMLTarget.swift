import CoreDataStore
import Foundation

/// Fuzzes the `.xcdatamodel/contents` XML loader.
///
/// A loaded model is then used as the reader uses it (entity numbers, `ZCOLUMNS` order, tombstones).
enum ModelXMLTarget {
    static let target = FuzzTarget(name: "modelxml") { data in
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
