import Foundation

/// One exporter per index: an exclusive `flock` on `<index>.lock`, which holds the owner's pid.
/// The kernel releases it when the process ends, however it ends.
final class WriterLock {
    private let descriptor: Int32
    private var released = false

    /// Takes the lock or reports who holds it.
    ///
    /// The lock file sits in a folder others may write: it is never followed through a symbolic link,
    /// and it is written only once it is known to be the running user's own regular file with no other
    /// name, so a planted link cannot make the exporter truncate a file elsewhere.
    init(indexPath: String) throws(ExportError) {
        let path = indexPath + ".lock"
        let descriptor = open(path, O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw .unsafeFile(path: path, reason: "it is a symbolic link") }
            if errno == ENOENT {
                let folder = URL(fileURLWithPath: indexPath).deletingLastPathComponent().path
                throw .index(.folderNotFound(path: indexPath, folder: folder))
            }
            throw .lock(path: path, holder: nil, reason: String(cString: strerror(errno)))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            throw .lock(path: path, holder: nil, reason: String(cString: strerror(errno)))
        }
        let problem: String? = if info.st_mode & S_IFMT != S_IFREG { "it is not a regular file" }
            else if info.st_uid != geteuid() { "it belongs to another user (uid \(info.st_uid))" }
            else if info.st_nlink != 1 { "it has \(info.st_nlink) names (a hard link to another file)" }
            else { nil }
        if let problem {
            close(descriptor)
            throw .unsafeFile(path: path, reason: problem)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            let holder = count > 0 ? Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) : nil
            throw .lock(path: path, holder: holder, reason: nil)
        }
        let pid = "\(getpid())\n"
        ftruncate(descriptor, 0)
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        // Only now: a lock that failed closed its descriptor above, and a deinit of a half-made lock must not
        // close that number again (another thread may have been given it meanwhile).
        self.descriptor = descriptor
    }

    /// Lets another exporter take the index (idempotent).
    func release() {
        guard !released else { return }
        released = true
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    deinit { release() }
}
