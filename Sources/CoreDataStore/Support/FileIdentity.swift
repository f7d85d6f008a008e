import Foundation

/// A file's device and inode: equal identities are the same file, whatever its path.
package struct FileIdentity: Equatable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    /// The identity of the file at `path` now; nil when there is none.
    package init?(path: String) {
        // POSIX stat (Foundation's attributes lack the device number on Linux).
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }
}

/// A file's size and modification time: a different stamp means the file was written.
struct FileStamp: Equatable, Sendable {
    var size: Int64
    var seconds: Int
    var nanoseconds: Int

    /// The stamp of the file at `path` now; nil when there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        #if canImport(Darwin)
        seconds = Int(info.st_mtimespec.tv_sec)
        nanoseconds = Int(info.st_mtimespec.tv_nsec)
        #else
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        #endif
    }
}
