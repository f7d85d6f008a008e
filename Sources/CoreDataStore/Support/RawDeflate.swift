import CZlib
import Foundation

/// Raw DEFLATE (no zlib header, window bits −15), the compression of `Z_MODELCACHE`.
enum RawDeflate {
    /// Why bytes could not be inflated.
    struct Error: Swift.Error, CustomStringConvertible {
        var description: String
    }

    /// Inflates `data`, refusing outputs larger than `limit` bytes (a hostile store cannot exhaust memory).
    static func inflate(_ data: Data, limit: Int = 256 << 20) throws(Error) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = data.withUnsafeBytes { buffer in
            czlib_raw_inflate(buffer.bindMemory(to: UInt8.self).baseAddress, buffer.count, limit, &output, &length)
        }
        guard status == CZLIB_OK, let output else {
            throw Error(description: status == CZLIB_MEMORY_ERROR
                ? "inflated data exceeds \(limit) bytes" : "not a raw DEFLATE stream")
        }
        return Data(bytesNoCopy: output, count: length, deallocator: .free)
    }

    /// Deflates `data` at best compression.
    static func deflate(_ data: Data) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = data.withUnsafeBytes { buffer in
            czlib_raw_deflate(buffer.bindMemory(to: UInt8.self).baseAddress, buffer.count, &output, &length)
        }
        // Deflate into a deflateBound-sized buffer only fails when malloc does.
        guard status == CZLIB_OK, let output else { fatalError("zlib could not allocate memory") }
        return Data(bytesNoCopy: output, count: length, deallocator: .free)
    }
}
