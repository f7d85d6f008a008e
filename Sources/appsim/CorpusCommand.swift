import ArgumentParser
import CoreDataStore
import CoreDataStoreWriter
import Foundation

/// `appsim corpus`: builds a Core Data store (with history) from the Places Corpus.
struct CorpusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "corpus",
        abstract: "Build a Core Data store with persistent history from the Places Corpus.",
        discussion: """
            small: the committed 34,006 places; full: 234,908 places (run scripts/derive-corpus full first); \
            1m: full four times over with jitter. --part K/N keeps every Nth place from the Kth (a fleet of N \
            stores that together hold the size once; each holds every country).

            Examples:
              appsim corpus --size small --out /tmp/places.sqlite
              appsim corpus --size 1m --part 3/16 --out /tmp/fleet/store-3.sqlite
            """)

    @Option(help: "small, full or 1m.")
    var size: String = "small"

    @Option(help: "The store to create (must not exist).")
    var out: String

    @Option(help: "Objects per save, like an app importing in batches.")
    var saveSize = 1_000

    @Option(help: ArgumentHelp("Only every Nth place, from the Kth (0-based).", valueName: "K/N"))
    var part: String?

    @Option(help: "The Corpus folder.")
    var corpus = Corpus.defaultDirectory

    /// `--part K/N` as numbers, nil without it.
    var slice: (index: Int, count: Int)? {
        guard let part else { return nil }
        let fields = part.split(separator: "/")
        guard fields.count == 2, let index = Int(fields[0]), let count = Int(fields[1]), count >= 1, (0..<count).contains(index) else { return nil }
        return (index, count)
    }

    func validate() throws {
        guard Corpus.Size(rawValue: size) != nil else { throw ValidationError("--size must be small, full or 1m") }
        guard part == nil || slice != nil else { throw ValidationError("--part must be K/N with 0 ≤ K < N, e.g. 0/16") }
        guard saveSize >= 1 else { throw ValidationError("--save-size must be at least 1") }
    }

    func run() throws {
        do {
            let corpus = Corpus(directory: URL(fileURLWithPath: self.corpus))
            var places = try corpus.places(size: Corpus.Size(rawValue: size) ?? .small)
            if let slice { places = places.enumerated().filter { $0.offset % slice.count == slice.index }.map(\.element) }
            let countries = try corpus.countries()
            let writer = try StoreWriter.create(at: out, model: try corpus.model())
            let start = DispatchTime.now().uptimeNanoseconds
            var save = SaveRequest(author: "import", contextName: "import", bundleID: "org.searchlight.appsim", processID: "appsim")
            for country in countries {
                save.insert("Country", attributes: [
                    "code": .string(country.code), "name": .string(country.name), "continent": .string(country.continent),
                    "population": .integer(country.population), "geonameID": .integer(country.geonameID),
                ])
            }
            let countryIDs = Dictionary(zip(countries.map(\.code), try writer.save(save).insertedObjectIDs), uniquingKeysWith: { first, _ in first })
            let now = Date()
            var saves = 1
            for first in stride(from: 0, to: places.count, by: saveSize) {
                var save = SaveRequest(author: "import", contextName: "import", bundleID: "org.searchlight.appsim", processID: "appsim")
                for place in places[first..<min(first + saveSize, places.count)] {
                    save.insert("Place", attributes: [
                        "name": .string(place.name), "asciiName": .string(place.asciiName),
                        "alternateNames": .string(place.alternateNames.joined(separator: ", ")),
                        "latitude": .double(place.latitude), "longitude": .double(place.longitude),
                        "population": .integer(place.population), "timeZone": .string(place.timeZone),
                        "geonameID": .integer(place.geonameID), "updatedAt": .date(now),
                    ], relationships: ["country": .toOne(countryIDs[place.country].map(ObjectReference.saved))])
                }
                try writer.save(save)
                saves += 1
            }
            try writer.checkpoint()
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let objects = places.count + countries.count
            print("appsim corpus: \(objects) objects (\(countries.count) countries, \(places.count) places) in \(saves) saves, "
                + String(format: "%.1f s, %.0f objects/s", seconds, Double(objects) / seconds) + " → \(out)")
        } catch {
            throw ExitCode(fail(error).code)
        }
    }
}
