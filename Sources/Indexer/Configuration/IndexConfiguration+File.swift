import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension IndexConfiguration {
    /// The largest configuration file read: 4 MiB, a thousand times a large real one.
    public static let maximumFileSize = 4 << 20

    /// Reads a configuration file. Only a regular file is read, and it is checked again on the open
    /// descriptor: a FIFO given as the configuration file (or swapped in after the check) never blocks the indexer.
    public init(contentsOf path: String) throws(LoadError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw LoadError(description: "\(path): no such file; check the path to the configuration")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw LoadError(description: "\(path) is \(Self.kind(info.st_mode)), not a configuration file")
        }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw LoadError(description: "\(path) cannot be read: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw LoadError(description: "\(path) is \(Self.kind(info.st_mode)), not a configuration file")
        }
        guard info.st_size <= Self.maximumFileSize else {
            throw LoadError(description: "\(path) is larger than \(Self.maximumFileSize >> 20) MiB; a configuration is a few kilobytes of JSON")
        }
        var data = Data(count: Int(info.st_size))
        var filled = 0
        while filled < data.count {
            let count = data.withUnsafeMutableBytes { buffer in read(descriptor, buffer.baseAddress.map { $0 + filled }, buffer.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        try self.init(json: data.prefix(filled), path: path)
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        default: "not a regular file"
        }
    }
}
