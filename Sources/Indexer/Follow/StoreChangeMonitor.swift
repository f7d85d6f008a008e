#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Wakes a follower when one of its stores' files is written (the database, its `-wal` or `-journal`), or
/// when ``wake()`` is called from another thread.
///
/// This is the one file of Searchlight that uses platform-only API: inotify on Linux, kqueue on Darwin.
/// Notifications only say *when* to look; `PRAGMA data_version` still decides whether anything was
/// committed, so a spurious wake costs one cheap query and a missed one is caught by the follower's
/// safety-net poll. Where neither is available, ``init(storePaths:)`` returns nil and the follower polls.
final class StoreChangeMonitor: Sendable {
    /// The folder watched for one or more stores, and the file names (not paths) in it whose changes matter.
    private struct Folder {
        var directory: String
        var names: Set<String>
    }

    /// A pipe (a socket pair on Linux) whose read end is watched with the stores: ``wake()`` writes a byte
    /// into it.
    private let wakeRead: Int32, wakeWrite: Int32
    #if canImport(Glibc)
    private let descriptor: Int32
    /// Watched folders by inotify watch descriptor.
    private let folders: [Int32: Folder]
    #elseif canImport(Darwin)
    private let queue: Int32
    /// Watched folders by the folder's descriptor, with their watched files (re-opened when a file is
    /// created or replaced: the `-wal` comes and goes). Touched only by the thread that waits.
    private let folders: Mutex<[Int32: (folder: Folder, files: [String: Int32])]>
    #endif

    /// Starts watching the folders of the stores at `storePaths`; nil when the platform cannot.
    init?(storePaths: [String]) {
        // SQLite follows a symbolic link to the store and keeps the -wal beside the real file: watch there.
        var byDirectory: [String: Folder] = [:]
        for storePath in storePaths {
            let url = URL(fileURLWithPath: storePath).resolvingSymlinksInPath().standardizedFileURL
            let base = url.lastPathComponent
            let directory = url.deletingLastPathComponent().path
            byDirectory[directory, default: Folder(directory: directory, names: [])].names.formUnion([base, base + "-wal", base + "-journal"])
        }
        var pipeEnds: [Int32] = [0, 0]
        #if canImport(Glibc)
        // Close-on-exec from the start: a process another thread spawns meanwhile inherits nothing.
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &pipeEnds) == 0 else { return nil }
        #else
        guard pipe(&pipeEnds) == 0 else { return nil }
        for end in pipeEnds { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK); _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        #endif
        (wakeRead, wakeWrite) = (pipeEnds[0], pipeEnds[1])
        #if canImport(Glibc)
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        var watched: [Int32: Folder] = [:]
        // The folder, not the files: the -wal may not exist yet, and a replaced store is a new inode.
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE)
        for folder in byDirectory.values where descriptor >= 0 {
            let watch = inotify_add_watch(descriptor, folder.directory, mask)
            guard watch >= 0 else { break }
            watched[watch] = folder
        }
        guard descriptor >= 0, watched.count == byDirectory.count else {
            if descriptor >= 0 { close(descriptor) }
            close(wakeRead)
            close(wakeWrite)
            return nil
        }
        folders = watched
        #elseif canImport(Darwin)
        queue = kqueue()
        var watched: [Int32: (folder: Folder, files: [String: Int32])] = [:]
        for folder in byDirectory.values where queue >= 0 {
            // kqueue reports writes to a file only on that file's descriptor, and creations on the folder's.
            let directoryDescriptor = open(folder.directory, O_EVTONLY)
            guard directoryDescriptor >= 0 else { break }
            watched[directoryDescriptor] = (folder, [:])
        }
        guard queue >= 0, watched.count == byDirectory.count else {
            for key in watched.keys { close(key) }
            if queue >= 0 { close(queue) }
            close(wakeRead)
            close(wakeWrite)
            return nil
        }
        Self.register(wakeRead, in: queue, filter: EVFILT_READ)
        for (key, entry) in watched {
            Self.register(key, in: queue)
            watched[key]?.files = Self.watchFiles(of: entry.folder, in: queue)
        }
        folders = Mutex(watched)
        #else
        return nil
        #endif
    }

    /// Starts watching the folder of one store.
    convenience init?(storePath: String) {
        self.init(storePaths: [storePath])
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
        #if canImport(Glibc)
        close(descriptor)
        #elseif canImport(Darwin)
        folders.withLock { folders in
            for (key, entry) in folders {
                for file in entry.files.values { close(file) }
                close(key)
            }
        }
        close(queue)
        #endif
    }

    /// Makes a thread in ``wait(timeout:)`` return now (true), or the next wait if none is waiting.
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Waits until one of the stores' files changes or ``wake()`` is called (true), or `timeout` seconds
    /// pass (false).
    func wait(timeout: TimeInterval) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return false }
            if waitOnce(milliseconds: Int32(clamping: (deadline - now + 999_999) / 1_000_000)) { return true }
        }
    }

    /// Empties the wake pipe; true if it held a wake.
    private func drainWakes() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64)
        var woken = false
        while read(wakeRead, &buffer, buffer.count) > 0 { woken = true }
        return woken
    }

    #if canImport(Glibc)
    /// One `poll` of the inotify descriptor and the wake pipe; true if an event named one of the stores'
    /// files, or a wake came.
    private func waitOnce(milliseconds: Int32) -> Bool {
        var requests = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        guard poll(&requests, 2, milliseconds) > 0 else { return false }
        var matched = drainWakes()
        // Room for many events; names are at most NAME_MAX bytes.
        let capacity = 64 * (MemoryLayout<inotify_event>.size + Int(NAME_MAX) + 1)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, capacity)
            guard count > 0 else { break } // EAGAIN: drained
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                if event.len > 0 {
                    // The name is NUL-padded to `len` bytes.
                    let bytes = UnsafeRawBufferPointer(start: buffer + nameStart, count: Int(event.len))
                    let name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                    if folders[event.wd]?.names.contains(name) == true { matched = true }
                }
                offset = nameStart + Int(event.len)
            }
        }
        return matched
    }
    #elseif canImport(Darwin)
    /// One `kevent` wait; true if one of the stores' files was written, created or replaced, or a wake came.
    private func waitOnce(milliseconds: Int32) -> Bool {
        var timeout = timespec(tv_sec: Int(milliseconds / 1000), tv_nsec: Int(milliseconds % 1000) * 1_000_000)
        var events = [kevent](repeating: kevent(), count: 16)
        let count = kevent(queue, nil, 0, &events, Int32(events.count), &timeout)
        guard count > 0 else { return false }
        var matched = false
        folders.withLock { folders in
            for event in events.prefix(Int(count)) {
                let ident = Int32(event.ident)
                if ident == wakeRead {
                    if drainWakes() { matched = true }
                } else if let entry = folders[ident] {
                    // A file appeared or went: watch what exists now, and look.
                    for file in entry.files.values { close(file) }
                    folders[ident]?.files = Self.watchFiles(of: entry.folder, in: queue)
                    matched = true
                } else {
                    if event.fflags & UInt32(NOTE_DELETE | NOTE_RENAME) != 0,
                       let key = folders.first(where: { $0.value.files.values.contains(ident) })?.key, let entry = folders[key] {
                        for file in entry.files.values { close(file) }
                        folders[key]?.files = Self.watchFiles(of: entry.folder, in: queue)
                    }
                    matched = true
                }
            }
        }
        return matched
    }

    private static func register(_ file: Int32, in queue: Int32, filter: Int32 = EVFILT_VNODE) {
        var change = kevent(ident: UInt(file), filter: Int16(filter), flags: UInt16(EV_ADD | EV_CLEAR),
                            fflags: filter == EVFILT_VNODE ? UInt32(NOTE_WRITE | NOTE_EXTEND | NOTE_DELETE | NOTE_RENAME) : 0, data: 0, udata: nil)
        _ = kevent(queue, &change, 1, nil, 0, nil)
    }

    /// Opens and registers the folder's store files that exist now (closing a descriptor removes its
    /// kqueue registration).
    private static func watchFiles(of folder: Folder, in queue: Int32) -> [String: Int32] {
        var files: [String: Int32] = [:]
        for name in folder.names {
            let file = open(folder.directory + "/" + name, O_EVTONLY)
            if file >= 0 {
                files[name] = file
                register(file, in: queue)
            }
        }
        return files
    }
    #else
    private func waitOnce(milliseconds: Int32) -> Bool { false }
    #endif
}
