#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Wakes the follower when one of the store's files is written: the database, its `-wal` or `-journal`.
///
/// This is the one file of Searchlight that uses platform-only API: inotify on Linux, kqueue on Darwin.
/// Notifications only say *when* to look; `PRAGMA data_version` still decides whether anything was
/// committed, so a spurious wake costs one cheap query and a missed one is caught by the follower's
/// safety-net poll. Where neither is available, ``init(storePath:)`` returns nil and the follower polls.
final class StoreChangeMonitor {
    /// The file names (not paths) in the store's folder whose changes matter.
    private let names: Set<String>
    private let directory: String
    #if canImport(Glibc)
    private let descriptor: Int32
    #elseif canImport(Darwin)
    private let queue: Int32
    private let directoryDescriptor: Int32
    /// Watched files by name; re-opened when a file is created or replaced (the `-wal` comes and goes).
    private var files: [String: Int32] = [:]
    #endif

    /// Starts watching the folder of the store at `storePath`; nil when the platform cannot.
    init?(storePath: String) {
        // SQLite follows a symbolic link to the store and keeps the -wal beside the real file: watch there.
        let url = URL(fileURLWithPath: storePath).resolvingSymlinksInPath().standardizedFileURL
        let base = url.lastPathComponent
        names = [base, base + "-wal", base + "-journal"]
        directory = url.deletingLastPathComponent().path
        #if canImport(Glibc)
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        // The folder, not the files: the -wal may not exist yet, and a replaced store is a new inode.
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        #elseif canImport(Darwin)
        queue = kqueue()
        guard queue >= 0 else { return nil }
        // kqueue reports writes to a file only on that file's descriptor, and creations on the folder's.
        directoryDescriptor = open(directory, O_EVTONLY)
        guard directoryDescriptor >= 0 else {
            close(queue)
            return nil
        }
        register(directoryDescriptor)
        rewatchFiles()
        #else
        return nil
        #endif
    }

    deinit {
        #if canImport(Glibc)
        close(descriptor)
        #elseif canImport(Darwin)
        for file in files.values { close(file) }
        close(directoryDescriptor)
        close(queue)
        #endif
    }

    /// Waits until one of the store's files changes (true) or `timeout` seconds pass (false).
    func wait(timeout: TimeInterval) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return false }
            if waitOnce(milliseconds: Int32(clamping: (deadline - now + 999_999) / 1_000_000)) { return true }
        }
    }

    #if canImport(Glibc)
    /// One `poll` of the inotify descriptor; true if an event named one of the store's files.
    private func waitOnce(milliseconds: Int32) -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, milliseconds) > 0 else { return false }
        var matched = false
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
                    if names.contains(name) { matched = true }
                }
                offset = nameStart + Int(event.len)
            }
        }
        return matched
    }
    #elseif canImport(Darwin)
    /// One `kevent` wait; true if one of the store's files was written, created or replaced.
    private func waitOnce(milliseconds: Int32) -> Bool {
        var timeout = timespec(tv_sec: Int(milliseconds / 1000), tv_nsec: Int(milliseconds % 1000) * 1_000_000)
        var events = [kevent](repeating: kevent(), count: 16)
        let count = kevent(queue, nil, 0, &events, Int32(events.count), &timeout)
        guard count > 0 else { return false }
        var matched = false
        for event in events.prefix(Int(count)) {
            if Int32(event.ident) == directoryDescriptor {
                // A file appeared or went: watch what exists now, and look.
                rewatchFiles()
                matched = true
            } else {
                if event.fflags & UInt32(NOTE_DELETE | NOTE_RENAME) != 0 { rewatchFiles() }
                matched = true
            }
        }
        return matched
    }

    private func register(_ file: Int32) {
        var change = kevent(ident: UInt(file), filter: Int16(EVFILT_VNODE), flags: UInt16(EV_ADD | EV_CLEAR),
                            fflags: UInt32(NOTE_WRITE | NOTE_EXTEND | NOTE_DELETE | NOTE_RENAME), data: 0, udata: nil)
        _ = kevent(queue, &change, 1, nil, 0, nil)
    }

    /// Re-opens the store's files (closing a descriptor removes its kqueue registration).
    private func rewatchFiles() {
        for file in files.values { close(file) }
        files = [:]
        for name in names {
            let file = open(directory + "/" + name, O_EVTONLY)
            if file >= 0 {
                files[name] = file
                register(file)
            }
        }
    }
    #else
    private func waitOnce(milliseconds: Int32) -> Bool { false }
    #endif
}
