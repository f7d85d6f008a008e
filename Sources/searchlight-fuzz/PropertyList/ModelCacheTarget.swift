import CoreDataStore
import Foundation

/// Fuzzes `Z_MODELCACHE` decoding as a whole: raw DEFLATE, binary plist, keyed archive, model.
///
/// A decoded model is then used as the history reader uses it (entity numbers, `ZCOLUMNS` order).
enum ModelCacheTarget {
    static let target = FuzzTarget(name: "modelcache") { data in
        guard let model = try? ManagedObjectModel(modelCache: data) else { return }
        ModelXMLTarget.use(model)
    }
}
