import Foundation

/// One exporter per index: an exclusive `flock` on `<index>.lock`, which holds the owner's pid.
/// The kernel releases it when the process ends, however it ends.
final class WriterLock {
    private let descriptor: Int32
    private var released = false

    /// Takes the lock or reports who holds it.
    init(indexPath: String) throws(ExportError) {
        let path = indexPath + ".lock"
        descriptor = open(path, O_CREAT | O_RDWR, 0o600)
        guard descriptor >= 0 else { throw .lock(path: path, holder: nil, reason: String(cString: strerror(errno))) }
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
