import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads files nobody controls without ever blocking: only regular files are read, checked again on the
/// open descriptor (a FIFO swapped in after the check cannot stall the read), and never past a limit.
enum RegularFile {
    /// What is at a path.
    enum Kind: Equatable {
        case missing
        case regular(size: Int64)
        /// Anything else, described for a message ("a FIFO", "a directory").
        case other(String)
    }

    /// Why a file could not be read.
    enum Failure: Error, Equatable {
        case missing
        case notRegular(String)
        case unreadable(String)
        case tooLarge(limit: Int)
    }

    /// What is at `path`, following symbolic links.
    static func kind(of path: String) -> Kind {
        var info = stat()
        guard stat(path, &info) == 0 else { return errno == ENOENT || errno == ENOTDIR ? .missing : .other("unreadable (\(String(cString: strerror(errno))))") }
        return kind(info)
    }

    private static func kind(_ info: stat) -> Kind {
        switch info.st_mode & S_IFMT {
        case S_IFREG: .regular(size: Int64(info.st_size))
        case S_IFDIR: .other("a directory")
        case S_IFIFO: .other("a FIFO (named pipe)")
        case S_IFSOCK: .other("a socket")
        case S_IFCHR: .other("a character device")
        case S_IFBLK: .other("a block device")
        default: .other("not a regular file")
        }
    }

    /// The first `limit` bytes of the regular file at `path` (all of it when shorter), or, with
    /// `whole`, the whole file, failing when it is longer than `limit`.
    static func read(_ path: String, limit: Int, whole: Bool = false) throws(Failure) -> Data {
        switch kind(of: path) {
        case .missing: throw .missing
        case .other(let description): throw .notRegular(description)
        case .regular: break
        }
        // O_NONBLOCK: should a FIFO replace the file between stat and open, open returns at once.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadable(String(cString: strerror(errno))) }
        guard case .regular(let size) = kind(info) else {
            if case .other(let description) = kind(info) { throw .notRegular(description) }
            throw .notRegular("not a regular file")
        }
        if whole && size > Int64(limit) { throw .tooLarge(limit: limit) }
        let wanted = whole ? Int(size) : min(limit, Int(clamping: size))
        var data = Data(count: wanted)
        var filled = 0
        while filled < wanted {
            let count = data.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress.map { $0 + filled }, wanted - filled)
            }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(String(cString: strerror(errno))) }
            if count == 0 { break }
            filled += count
        }
        return data.prefix(filled)
    }
}
