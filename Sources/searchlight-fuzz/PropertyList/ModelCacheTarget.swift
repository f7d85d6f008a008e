@testable import CoreDataStore
import Foundation

/// Fuzzes `Z_MODELCACHE` decoding as a whole: raw DEFLATE, binary plist, keyed archive, model.
///
/// A decoded model is then used as the history reader uses it (entity numbers, `ZCOLUMNS` order). Every
/// archived predicate in the archive (fetched properties', templates') is written back in format syntax,
/// as fetch-request templates are: seeds carry Apple's, which mutations bend.
enum ModelCacheTarget {
    static let target = FuzzTarget(name: "modelcache") { data in
        if let inflated = try? RawDeflate.inflate(data, limit: 1 << 22), let archive = try? KeyedArchive(data: inflated) {
            for object in archive.objects where archive.className(of: object)?.hasSuffix("Predicate") == true {
                _ = ManagedObjectModel.predicateFormat(object, archive: archive)
            }
        }
        guard let model = try? ManagedObjectModel(modelCache: data) else { return }
        ModelXMLTarget.use(model)
    }
}
