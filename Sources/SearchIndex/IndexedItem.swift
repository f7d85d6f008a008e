import Foundation

/// One searchable item: what the exporter computed for one object, keyed by its URI.
public struct IndexedItem: Sendable, Hashable {
    /// The object-ID URI: the item's identity and the deep link a search returns.
    public var uri: String
    /// The object's entity.
    public var entity: String
    /// The name shown for the item (weighted highest in ranking).
    public var displayName: String
    /// The title (weighted high).
    public var title: String
    /// Text fields (weighted normally).
    public var text: [String]
    /// Keywords (weighted lowest).
    public var keywords: [String]
    /// Exact latitude in degrees, when the item has a place.
    public var latitude: Double?
    /// Exact longitude in degrees, when the item has a place.
    public var longitude: Double?
    /// A date (e.g. last update).
    public var date: Date?
    /// A static importance hint (like Core Spotlight's `rankingHint`): lifts near-ties, never buries a
    /// far better text match.
    public var rank: Double
    /// Values to filter, sort and count by (`population > 1000000`), by attribute name; an
    /// attribute reached through a to-many relationship has several.
    public var attributes: [String: [FilterValue]]

    /// Creates an item.
    public init(uri: String, entity: String, displayName: String, title: String = "", text: [String] = [],
                keywords: [String] = [], latitude: Double? = nil, longitude: Double? = nil, date: Date? = nil, rank: Double = 0,
                attributes: [String: [FilterValue]] = [:]) {
        self.attributes = attributes
        self.uri = uri
        self.entity = entity
        self.displayName = displayName
        self.title = title
        self.text = text
        self.keywords = keywords
        self.latitude = latitude
        self.longitude = longitude
        self.date = date
        self.rank = rank
    }

    /// Whether the item has a valid location.
    public var hasLocation: Bool {
        guard let latitude, let longitude else { return false }
        return (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }
}

/// Where an exporter is in a store: the history token indexed, and what it was computed from.
public struct StoreCheckpoint: Sendable, Hashable {
    /// The store's UUID.
    public var storeUUID: String
    /// The store file's path (for `resolve` and `status`).
    public var storePath: String
    /// The last history transaction whose changes the index holds.
    public var token: Int64
    /// The store model's version-hash digest when indexed (a change means migration).
    public var modelDigest: String?
    /// A digest of the configuration that shaped the items (a change means rebuild).
    public var configurationDigest: String?
    /// The exporter's own resumable state (e.g. a half-done first export), opaque to the index.
    public var exportState: String?
    /// When the checkpoint was written.
    public var updatedAt: Date
    /// When the transaction ``token`` names was saved, as the store recorded it: with the token it
    /// identifies the history followed, so a restored store that reused the number is told apart.
    public var tokenTimestamp: Date?
    /// The configuration the items were built with, as configuration JSON (opaque to the index).
    public var configuration: String?
    /// Each entity of the store's model that has a parent, and that parent: entity filters include sub-entities.
    public var entityParents: [String: String] = [:]

    /// The ``exportState`` of a store whose items are being removed (see ``SearchIndex/removeStore(uuid:batchSize:)``).
    /// The exporter's own states are JSON objects, which never equal it.
    public static let removalInProgress = "removing"

    /// Whether the store's items are being removed (an interrupted removal, or one under way).
    public var isRemovingItems: Bool { exportState == Self.removalInProgress }

    /// Creates a checkpoint.
    public init(storeUUID: String, storePath: String, token: Int64, modelDigest: String? = nil,
                configurationDigest: String? = nil, exportState: String? = nil, updatedAt: Date = Date(), tokenTimestamp: Date? = nil,
                configuration: String? = nil, entityParents: [String: String] = [:]) {
        self.entityParents = entityParents
        self.tokenTimestamp = tokenTimestamp
        self.configuration = configuration
        self.storeUUID = storeUUID
        self.storePath = storePath
        self.token = token
        self.modelDigest = modelDigest
        self.configurationDigest = configurationDigest
        self.exportState = exportState
        self.updatedAt = updatedAt
    }
}

/// One atomic change to the index: upserts, deletes and the store's new checkpoint, applied in one
/// transaction. A crash at any point leaves the previous checkpoint's state.
public struct IndexBatch: Sendable {
    /// Items to insert or replace (idempotent).
    public var upserts: [IndexedItem] {
        didSet { prepared = nil }
    }
    /// The upserts prepared ahead, when the batch was made from prepared items (and not changed since).
    private(set) var prepared: [PreparedItem]?

    /// The upserts prepared ahead when the batch was made so; otherwise prepared here, untokenized: the
    /// writer tokenizes only what it writes (an unchanged item never).
    package var preparedUpserts: [PreparedItem] { prepared ?? upserts.map { PreparedItem($0, tokenized: false) } }
    /// URIs to remove.
    public var deletes: [String]
    /// The checkpoint the batch brings the store to.
    public var checkpoint: StoreCheckpoint
    /// Whether the batch is part of a rebuild begun with ``SearchIndex/beginRebuild(storeUUID:)``: its
    /// upserts are marked as written again, so ``SearchIndex/sweep(keeping:batchSize:)`` keeps them.
    public var marksRebuild: Bool
    /// Digests of what related objects show the store's items, by the related object's URI, saved with the
    /// batch (see ``SearchIndex/shownValues(for:)``).
    public var shownValues: [String: String] = [:]
    /// Related objects whose digests are forgotten (objects deleted from the store), with their deferred
    /// dependents.
    public var forgottenShownValues: [String] = []
    /// Whether every digest of the store saved before this batch is forgotten (an export that cannot vouch
    /// for the ones it saved), with every deferred dependent of the store (the export re-indexes them).
    public var forgetsStoreShownValues = false
    /// How far the re-indexing of related objects' dependents went, by the related object's URI, saved
    /// with the batch: the exporter's own words, which the index keeps and hands back
    /// (``SearchIndex/deferredDependents(storeUUID:)``) without reading them.
    public var deferredDependents: [String: String] = [:]
    /// Related objects whose dependents are all re-indexed now: their progress is forgotten.
    public var finishedDeferredDependents: [String] = []

    /// Creates a batch.
    public init(upserts: [IndexedItem] = [], deletes: [String] = [], checkpoint: StoreCheckpoint, marksRebuild: Bool = false) {
        self.upserts = upserts
        self.deletes = deletes
        self.checkpoint = checkpoint
        self.marksRebuild = marksRebuild
    }

    /// Creates a batch of items prepared ahead (see ``PreparedItem``): the writer then only writes them.
    public init(prepared: [PreparedItem], deletes: [String] = [], checkpoint: StoreCheckpoint, marksRebuild: Bool = false) {
        self.init(upserts: prepared.map(\.item), deletes: deletes, checkpoint: checkpoint, marksRebuild: marksRebuild)
        self.prepared = prepared
    }
}

/// What a batch changed.
public struct BatchResult: Sendable, Hashable {
    /// Items that did not exist before.
    public var inserted: Int
    /// Items replaced by different content.
    public var updated: Int
    /// Items removed (deletes of unknown URIs do not count).
    public var deleted: Int
    /// Items upserted with exactly the content already indexed (nothing was rewritten).
    public var unchanged: Int

    /// Creates a result.
    public init(inserted: Int = 0, updated: Int = 0, deleted: Int = 0, unchanged: Int = 0) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.unchanged = unchanged
    }

    /// Adds what another batch of the same transaction changed.
    public mutating func add(_ other: BatchResult) {
        inserted += other.inserted
        updated += other.updated
        deleted += other.deleted
        unchanged += other.unchanged
    }
}
