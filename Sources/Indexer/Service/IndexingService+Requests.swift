import CoreDataStore
import Foundation
import SearchIndex

extension IndexingService {
    /// Catches every store up once, without following (what a nightly job or `index` without follow does),
    /// and returns what each catch-up did. ``requestStop()`` ends it between batches; the summaries then say
    /// `stopped`. Subscribers hear its events as a run's: one ``IndexingEvent/caughtUp(_:)`` per store, then
    /// ``IndexingEvent/stopped(error:)``.
    ///
    /// - Parameter rebuild: Write every store's items again from scratch.
    public func catchUp(rebuild: Bool = false) async throws(ExportError) -> [Exporter.Summary] {
        let (indexPath, openWriter, stores, options, send) = (indexPath, openWriter, stores, options, broadcaster.send)
        return try await runOnce(named: "searchlight catch-up", announce: true) { control throws(ExportError) in
            let follower = try Follower.open(indexPath: indexPath, openWriter: openWriter, stores: stores, options: options, requiresHistory: false,
                                             rebuild: rebuild, send: send)
            let summaries = try await follower.catchUpAll(control)
            // Reindex requests made meanwhile are served by this run, with the follower still open.
            await follower.serve(control.close())
            return summaries
        }
    }

    /// Builds the items of the objects named by `uris` (`x-coredata://<store>/<Entity>/p<n>`) again from their
    /// stores as they are now: objects gone, or left out by an ``ItemProducer``, lose their items.
    ///
    /// While the service runs, its task does it between batches; otherwise (or when the run ends before taking
    /// it) the index is opened for it.
    /// - Throws: ``ExportError/store(_:)`` for a malformed URI, ``ExportError/unknownStore(uuid:)`` for one
    ///   of a store the service does not index.
    @discardableResult
    public func reindex(uris: [String]) async throws(ExportError) -> [Exporter.Summary] {
        var ids: [ManagedObjectID] = []
        for uri in uris {
            do { ids.append(try ManagedObjectID(uriRepresentation: uri)) } catch { throw .store(error) }
        }
        let (indexPath, openWriter, stores, options, send, wanted) = (indexPath, openWriter, stores, options, broadcaster.send, ids)
        while true {
            if let control = runningControl() {
                do {
                    return try await withCheckedThrowingContinuation { continuation in
                        if !control.submit(.reindex(wanted, continuation)) {
                            continuation.resume(throwing: ExportError.stopped)
                        }
                    }
                } catch ExportError.stopped {
                    // The run was ending as the request came (it took its last requests, or stopped before serving
                    // them): served by the next run, or by a run of its own once that one has ended, rather than refused.
                } catch {
                    throw ExportError(error)
                }
            }
            // No run follows: this one opens the index for the reindex alone, as a run of its own.
            do {
                return try await runOnce(named: "searchlight reindex", announce: false) { _ throws(ExportError) in
                    try await Follower.open(indexPath: indexPath, openWriter: openWriter, stores: stores, options: options, requiresHistory: false, send: send)
                        .reindex(wanted)
                }
            } catch .alreadyRunning where runningControl() != nil {
                // A run started meanwhile (start() after the last one ended): it serves the request.
            }
        }
    }

    /// Stops the service, then removes every item and checkpoint of its stores from the index, and the index
    /// file itself when no other store's items are left in it (another backend keeps its database). The
    /// next ``start(rebuild:)`` exports every store anew.
    public func deleteIndex() async throws(ExportError) {
        await stop()
        let (indexPath, openWriter, stores) = (indexPath, openWriter, stores)
        let paths = Set(stores.map { URL(fileURLWithPath: $0.path).standardizedFileURL.path })
        // A run of its own: a start() or catch-up asked meanwhile waits for it, or it for them.
        try await runOnce(named: "searchlight delete index", announce: false) { _ throws(ExportError) in
            if let openWriter {
                // Many machines write such an index, and one path may name another machine's store there:
                // the stores go by the UUIDs of this service's store files.
                do {
                    let index = try openWriter()
                    defer { index.release() }
                    // A store file that is gone cannot say its UUID: its items stay (a path alone may be another machine's).
                    let uuids = Set(stores.compactMap { try? PersistentStore(path: $0.path, modelPath: $0.modelPath).metadata.storeUUID.uppercased() })
                    for checkpoint in try index.checkpoints() where uuids.contains(checkpoint.storeUUID.uppercased()) {
                        _ = try index.removeStore(uuid: checkpoint.storeUUID)
                    }
                } catch {
                    throw ExportError(error)
                }
                return
            }
            guard FileManager.default.fileExists(atPath: indexPath) else { return }
            let lock = try WriterLock(indexPath: indexPath)
            defer { lock.release() }
            do {
                let index = try SearchIndex(path: indexPath, mode: .readWrite(permissions: nil))
                for checkpoint in try index.checkpoints() where paths.contains(checkpoint.storePath) {
                    _ = try index.removeStore(uuid: checkpoint.storeUUID)
                }
                guard try index.checkpoints().isEmpty else { return }
            } catch {
                throw ExportError(error)
            }
            for file in [indexPath, indexPath + "-wal", indexPath + "-shm"] { unlink(file) }
        }
    }

    /// Runs `body` as a run of its own that does not follow: it begins once any run before it has ended, and
    /// ends whatever `body` returns or throws (subscribers hear ``IndexingEvent/stopped(error:)`` when
    /// `announce` is set).
    func runOnce<T: Sendable>(named name: String, announce: Bool,
                              _ body: @escaping @Sendable (RunControl) async throws(ExportError) -> T) async throws(ExportError) -> T {
        let control = try await begin(follows: false)
        do {
            let value = try await Self.run(named: name, control: control) { () throws(ExportError) in try await body(control) }
            end(control, error: nil, announce: announce)
            return value
        } catch {
            end(control, error: error, announce: announce)
            throw error
        }
    }

    /// The control of the run under way, if one is.
    func runningControl() -> RunControl? {
        state.withLock { $0.control.flatMap { $0.isEnding ? nil : $0 } }
    }

    /// Starts `body` as a run's task, on a thread of its own: its SQLite work and file waits block that thread,
    /// never Swift's cooperative pool. `control`'s stop request cancels the task.
    @discardableResult
    static func runTask<T: Sendable>(named name: String, control: RunControl,
                                     _ body: @escaping @Sendable () async throws(ExportError) -> T) -> Task<Result<T, ExportError>, Never> {
        let task = ThreadExecutor.detachedTask(named: name) { () async -> Result<T, ExportError> in
            do throws(ExportError) { return .success(try await body()) } catch { return .failure(error) }
        }
        control.attach(cancelling: task.cancel)
        return task
    }

    /// Runs `body` as a run's task (``runTask(named:control:_:)``) and returns what it returns; cancelling the
    /// caller's task stops it as ``requestStop()`` would.
    static func run<T: Sendable>(named name: String, control: RunControl,
                                 _ body: @escaping @Sendable () async throws(ExportError) -> T) async throws(ExportError) -> T {
        let task = runTask(named: name, control: control, body)
        // Stopping the run cancels its task (``RunControl/attach(cancelling:)``).
        return try await withTaskCancellationHandler { await task.value } onCancel: { control.requestStop() }.get()
    }
}
