import Foundation

/// How far a first export has come, reported after every committed page.
public struct ExportProgress: Sendable {
    /// Objects read so far in this run (the pages committed).
    public var objectsRead: Int
    /// Objects this run reads in all: the store's count when it started (a resumed export counts only
    /// what is left). Saves made meanwhile are replayed from history afterwards, so the count may drift.
    public var objectCount: Int
    /// Items written to the index so far (objects of entities that are not indexed make none).
    public var itemsWritten: Int
    /// The root entity being read.
    public var entity: String
    /// Seconds since this run's export started.
    public var elapsed: TimeInterval

    /// The fraction done, between 0 and 1.
    public var fraction: Double { objectCount > 0 ? min(1, Double(objectsRead) / Double(objectCount)) : 1 }

    /// Objects read per second so far.
    public var rate: Double { elapsed > 0 ? Double(objectsRead) / elapsed : 0 }

    /// Seconds left at the rate so far; nil before there is a rate.
    public var secondsLeft: Double? { rate > 0 ? Double(max(0, objectCount - objectsRead)) / rate : nil }
}
