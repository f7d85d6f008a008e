import CoreDataStore
import CoreDataStoreWriter
import Foundation
import GRDB
import Testing
import TestScratch

/// What people type works, and what scripts read is complete or an error.
@Suite("searchctl: what people type, what scripts get", .ownThread)
struct CommandLineTruthTests {
    /// A store with places on both sides of the equator and of Greenwich, indexed.
    static func southernStore() throws -> String {
        let directory = Scratch.folder.appendingPathComponent("south-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("Places.sqlite").path
        let writer = try StoreWriter.create(at: store, model: try ManagedObjectModel(contentsOf: IndexCrashTests.corpusModel))
        var save = SaveRequest()
        let australia = save.insert("Country", attributes: ["code": .string("AU"), "name": .string("Australia")])
        let argentina = save.insert("Country", attributes: ["code": .string("AR"), "name": .string("Argentina")])
        for (name, latitude, longitude, country) in [("Sydney", -33.86785, 151.20732, australia), ("Parramatta", -33.81667, 151.0, australia),
                                                     ("Buenos Aires", -34.61315, -58.37723, argentina), ("Quilmes", -34.72418, -58.25265, argentina)] {
            save.insert("Place", attributes: ["name": .string(name), "asciiName": .string(name), "latitude": .double(latitude),
                                              "longitude": .double(longitude), "population": .integer(1_000)],
                        relationships: ["country": .toOne(country)])
        }
        _ = try writer.save(save)
        let config = CLI.projectRoot.appendingPathComponent("Corpus/places-config.json").path
        let indexed = try CLI.run(["index", "--store", store, "--config", config, "--quiet"])
        #expect(indexed.status == 0, "\(indexed.stderr)")
        return store
    }

    func names(_ result: CLI.Result) throws -> [String] {
        try result.lines.map { line in ((try CLI.json(line) as? [String: Any])?["displayName"] as? String) ?? "?" }
    }

    @Test("southern and western coordinates are values, not options: --near, --bbox, --radius")
    func negativeNumbers() throws {
        let store = try Self.southernStore()
        let near = try CLI.run(["search", "--near", "-33.87,151.21", "--radius", "50km", "--store", store, "--format", "jsonl"])
        #expect(near.status == 0, "\(near.stderr)")
        #expect(try names(near) == ["Sydney", "Parramatta"])
        let box = try CLI.run(["search", "--bbox", "-35,-59,-34,-58", "--store", store, "--format", "jsonl"])
        #expect(box.status == 0, "\(box.stderr)")
        #expect(Set(try names(box)) == ["Buenos Aires", "Quilmes"])
        let negativeRadius = try CLI.run(["search", "--near", "-33.87,151.21", "--radius", "-5km", "--store", store])
        #expect(negativeRadius.status == 64 && negativeRadius.stderr.contains("radius"), "\(negativeRadius.stderr)")
        let help = try CLI.run(["search", "--help"])
        #expect(help.stdout.contains("--near -33.87,151.21"))
    }

    @Test("--where filters by the configuration's attributes, alone or with words and places; mistakes are exit 64 with the position")
    func whereFilters() throws {
        let store = try Self.southernStore()
        let australian = try CLI.run(["search", "--where", "country == \"AU\"", "--store", store, "--format", "jsonl"])
        #expect(try australian.status == 0 && Set(names(australian)) == ["Sydney", "Parramatta"], "\(australian.stderr)")
        let near = try CLI.run(["search", "--near", "-34.6,-58.4", "--radius", "50km", "--where", "country != 'AR'", "--store", store])
        #expect(near.status == 1 && near.stdout.isEmpty)
        let words = try CLI.run(["search", "sydney", "--where", "population BETWEEN {500, 2000} AND country IN {'AU', 'NZ'}", "--store", store, "--format", "jsonl"])
        #expect(try names(words) == ["Sydney"])
        let faceted = try #require(try CLI.json(try CLI.run(["search", "--where", "population > 0", "--sort", "population:desc", "--facet", "country",
                                                             "--store", store, "--format", "json"]).stdout) as? [String: Any])
        let facets = try #require((faceted["facets"] as? [String: Any])?["country"] as? [[String: Any]])
        #expect(facets.map { "\($0["value"] ?? "")=\($0["count"] ?? "")" }.sorted() == ["AR=2", "AU=2"] && faceted["found"] as? Int == 4)
        #expect(try CLI.run(["search", "--where", "population > 0", "--sort", "population:up", "--store", store]).status == 64)
        let typo = try CLI.run(["search", "--where", "populaton > 5", "--store", store])
        #expect(typo.status == 64 && typo.stderr.contains("character 1") && typo.stderr.contains("the index has country, population"), "\(typo.stderr)")
        let json = try CLI.run(["search", "--where", "population >", "--store", store, "--format", "json"])
        let error = try #require((try CLI.json(json.stderr) as? [String: Any])?["error"] as? [String: Any])
        #expect(json.status == 64 && json.stdout.isEmpty && (error["message"] as? String)?.contains("character 13") == true)
    }

    @Test("unquoted words are one query")
    func unquotedWords() throws {
        let store = try Self.southernStore()
        let result = try CLI.run(["search", "buenos", "aires", "--store", store, "--format", "jsonl"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(result) == ["Buenos Aires"])
    }

    @Test("hostile query strings from the command line are a query or exit 64, never an FTS5 error; phrase prefixes, curly quotes, dangling OR")
    func hostileQueries() throws {
        let store = try Self.southernStore()
        let queries = ["\"\u{301}", "\"", "\"\"", "*", "-", "--x", "NEAR(", "a AND", "OR", "sydney OR", "(", ")", "^", ":", "{a}", "\u{FEFF}",
                       "a\u{0}b", "\u{1B}[31m", "\"sydney", "syd*ney", "\"\u{338}*", "+", "''", "„sydney“", "«buenos aires»"]
        for query in queries {
            let result = try CLI.run(["search", "--store", store, "--", query])
            #expect([0, 1, 64].contains(result.status) && !result.stderr.contains("fts5") && !result.stderr.contains("bug"), "\(query.debugDescription): \(result.status) \(result.stderr)")
        }
        #expect(try CLI.run(["search", "sydney OR", "--store", store]).stderr.contains("OR needs a word on each side"))
        #expect(try names(try CLI.run(["search", "\"buenos air*\"", "--store", store, "--format", "jsonl"])) == ["Buenos Aires"])
        #expect(try names(try CLI.run(["search", "“buenos aires”", "--store", store, "--format", "jsonl"])) == ["Buenos Aires"])
        // Bytes that are not UTF-8 reach the program only through a shell: refused, not repaired into another query.
        let raw = try CLI.runProgram("/bin/sh", ["-c", #"exec "$0" search "$(printf 'syd\377')" --store "$1""#, CLI.executable.path, store])
        #expect(raw.status == 64 && raw.stderr.contains("argument 2 is not valid UTF-8") && raw.stdout.isEmpty, "\(raw.stderr)")
        // An option given twice says why it must be once, in its own terms.
        let twice = try CLI.run(["search", "sydney", "--limit", "3", "--store", store, "--limit", "4"])
        #expect(twice.status == 64 && twice.stderr.contains("--limit was given more than once; give it once (a second value would silently replace the first)"),
                "\(twice.stderr)")
        #expect(try CLI.run(["search", "sydney", "--store", store, "--store", store]).stderr.contains("one command reads one store and one index"))
        // A word to leave out, typed where the parser reads options, says how to type it.
        let excluded = try CLI.run(["search", "sydney", "-australia", "--store", store])
        #expect(excluded.status == 64 && excluded.stderr.contains("to leave 'australia' out of the hits, put the query after --"), "\(excluded.stderr)")
        #expect(try CLI.run(["search", "--store", store, "--", "sydney", "-australia"]).status != 64)
    }

    @Test("output that cannot be written is exit 74 and one line, whatever the command", arguments: [
        ["search", "sydney"], ["search", "sydney", "--format", "json"], ["dump"], ["status"], ["model", "--format", "text"],
        ["history"], ["index"], ["index", "--follow"],
    ])
    func fullDisk(arguments: [String]) throws {
        let store = try Self.southernStore()
        let process = Process()
        process.executableURL = CLI.executable
        // index writes a fresh index of its own: one another test built would add a note on stderr.
        let fresh = arguments.first == "index" ? ["--index", Scratch.folder.appendingPathComponent("full-\(UUID().uuidString).searchindex").path] : []
        process.arguments = arguments + fresh + ["--store", store]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 74, "\(arguments): \(message)")
        #expect(message.split(separator: "\n").count == 1 && message.contains("cannot write the output"), "\(message)")
    }

    @Test("--version, and an index in a folder that does not exist is exit 73 naming the folder")
    func versionAndFolders() throws {
        let version = try CLI.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("searchctl "))
        let store = try Self.southernStore()
        let result = try CLI.run(["index", "--store", store, "--index", "/nonexistent-folder/sub/x.searchindex"])
        #expect(result.status == 73 && result.stderr.contains("/nonexistent-folder/sub does not exist"), "\(result.stderr)")
    }

    @Test("conflicting or repeated options are usage errors, whatever the command")
    func conflictingOptions() throws {
        let store = try Self.southernStore()
        for arguments in [["search", "sydney", "--store", store, "--store", store], ["dump", "--store", store, "--index", store + ".x"],
                          ["status", "--index", "a", "--index", "b"], ["search", "sydney", "--store", store, "--format", "json", "--format", "uris"],
                          ["index", "--store", store, "--store=" + store]] {
            let result = try CLI.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // After --, a word that looks like an option is part of the query.
        #expect(try CLI.run(["search", "--store", store, "--", "sydney", "--store"]).status == 0)
    }

    @Test("with --format json or jsonl, errors are JSON on stderr and stdout stays empty; resolve lists failed URIs in its output")
    func jsonErrors() throws {
        let store = try Self.southernStore()
        let bad = try CLI.run(["search", "sydney", "--near", "100,0", "--store", store, "--format", "json"])
        #expect(bad.status == 64 && bad.stdout.isEmpty)
        let error = try #require(try CLI.json(bad.stderr) as? [String: Any])["error"] as? [String: Any]
        #expect(error?["code"] as? Int == 64 && (error?["message"] as? String)?.contains("latitude") == true)

        let uuidLine = try #require(try CLI.run(["dump", "--store", store]).lines.first)
        let uri = try #require((try CLI.json(uuidLine) as? [String: Any])?["uri"] as? String)
        let missing = uri.replacingOccurrences(of: "/p1", with: "/p999")
        let resolved = try CLI.run(["resolve", uri, missing, "not-a-uri", "--store", store, "--format", "jsonl"])
        #expect(resolved.status == 65)
        let entries = try resolved.lines.map { try #require(try CLI.json($0) as? [String: Any]) }
        #expect(entries.count == 3)
        #expect(entries[0]["entity"] as? String != nil)
        #expect(entries[1]["uri"] as? String == missing && entries[1]["error"] is String)
        #expect(entries[2]["uri"] as? String == "not-a-uri" && entries[2]["error"] is String)
        let errors = resolved.stderr.split(separator: "\n").compactMap { try? CLI.json(String($0)) as? [String: Any] }
        #expect(errors.count == 2)
    }

    @Test("JSON shapes: every hit and every dumped item has the same keys, null when absent; numbers are numbers")
    func jsonShapes() throws {
        let store = try Self.southernStore()
        let shapes = [["search", "sydney"], ["search", "sydney", "--near", "-33.87,151.21"], ["search", "sydney", "--snippets"]]
        var keySets: Set<[String]> = []
        for arguments in shapes {
            let result = try CLI.run(arguments + ["--store", store, "--format", "jsonl"])
            #expect(result.status == 0, "\(result.stderr)")
            for line in result.lines {
                let hit = try #require(try CLI.json(line) as? [String: Any])
                keySets.insert(hit.keys.sorted())
                #expect(hit["score"] is Double && (hit["latitude"] is Double || hit["latitude"] is NSNull))
                #expect(arguments.contains("--near") ? hit["distanceMeters"] is Double : hit["distanceMeters"] is NSNull)
                #expect(arguments.contains("--snippets") ? hit["snippet"] is String : hit["snippet"] is NSNull)
                #expect(hit["typos"] is Int)
            }
        }
        #expect(keySets == [["displayName", "distanceMeters", "entity", "latitude", "longitude", "score", "snippet", "typos", "uri"]])
        let dumped = try CLI.run(["dump", "--store", store]).lines.map { try #require(try CLI.json($0) as? [String: Any]) }
        #expect(!dumped.isEmpty && Set(dumped.map { $0.keys.sorted() }).count == 1 && dumped.allSatisfy { $0["rank"] is Double })
    }

    @Test("index without --config keeps the configuration the index was built with; another --config rebuilds, announced")
    func storedConfiguration() throws {
        let store = try Self.southernStore() // indexed with Corpus/places-config.json
        let again = try CLI.run(["index", "--store", store])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("0 inserted, 0 updated, 0 deleted"), "\(again.stdout)")
        #expect(again.stderr.contains("using the configuration the index was built with"))
        let status = try #require(try CLI.json(try CLI.run(["status", "--store", store, "--format", "json"]).stdout) as? [String: Any])
        let stores = try #require(status["stores"] as? [[String: Any]])
        let configuration = try #require(stores.first?["configuration"] as? [String: Any])
        let place = (configuration["entities"] as? [String: Any])?["Place"] as? [String: Any]
        #expect(place?["keywords"] as? [String] == ["country.code"])
        // The printed configuration is the stored one.
        #expect(try CLI.run(["index", "--store", store, "--print-config"]).stdout.contains("country.code"))

        let other = Scratch.folder.appendingPathComponent("other-\(UUID().uuidString).json").path
        try Data(#"{"entities": {"Place": {"keywords": []}}}"#.utf8).write(to: URL(fileURLWithPath: other))
        let changed = try CLI.run(["index", "--store", store, "--config", other])
        #expect(changed.status == 0 && changed.stderr.contains("the configuration changed"), "\(changed.stderr)")
    }

    @Test("a copy of a store (same UUID) is refused by an index that follows the original, naming both; a moved store is followed")
    func sameUUID() throws {
        let store = try Self.southernStore()
        let index = URL(fileURLWithPath: store).deletingPathExtension().appendingPathExtension("searchindex").path
        let folder = Scratch.folder.appendingPathComponent("copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("Copy.sqlite").path
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        let result = try CLI.run(["index", "--store", copy, "--index", index])
        #expect(result.status == 65 && result.stderr.contains(copy) && result.stderr.contains(store), "\(result.stderr)")
        // The original moved away: the copy at its new path is the store now.
        try FileManager.default.removeItem(atPath: store)
        let moved = try CLI.run(["index", "--store", copy, "--index", index])
        #expect(moved.status == 0 && moved.stdout.contains("0 inserted, 0 updated, 0 deleted"), "\(moved.stderr)")
    }

    @Test("--entity includes sub-entities and accepts abstract parents, as a Core Data fetch; --exact-entity does not")
    func entityKinds() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        #expect(try CLI.run(["index", "--store", store, "--quiet"]).status == 0)
        func count(_ arguments: [String]) throws -> Int { try CLI.run(["dump", "--store", store] + arguments).lines.count }
        let books = try count(["--entity", "Book", "--exact-entity"]), novels = try count(["--entity", "GraphicNovel"])
        #expect(books == 51 && novels == 1)
        #expect(try count(["--entity", "Book"]) == books + novels)
        // Writer is abstract: its items are its sub-entity Author's.
        #expect(try count(["--entity", "Writer"]) == (try count(["--entity", "Author"])))
        let search = try CLI.run(["search", "graphic", "--store", store, "--entity", "Book", "--format", "jsonl"])
        #expect(search.status == 0 && search.stdout.contains("\"entity\":\"GraphicNovel\""))
        #expect(try CLI.run(["search", "graphic", "--store", store, "--entity", "Book", "--exact-entity"]).status == 1)
        #expect(try CLI.run(["search", "graphic", "--store", store, "--entity", "Spaceship"]).status == 64)
    }

    @Test("while a first export runs, search and dump say results are incomplete (N of M objects) and status shows the export, not lag 0")
    func incompleteExport() throws {
        let store = try Self.southernStore()
        let index = URL(fileURLWithPath: store).deletingPathExtension().appendingPathExtension("searchindex").path
        func setExportState(_ state: String) throws {
            let queue = try DatabaseQueue(path: index)
            try queue.write { db in try db.execute(sql: "UPDATE stores SET export_state = ?", arguments: [state]) }
            try queue.close()
        }
        // The checkpoint as an interrupted first export leaves it: where to resume, and 2 of 5 objects done.
        try setExportState("1 0 2 2/5")
        let search = try CLI.run(["search", "sydney", "--store", store])
        #expect(search.status == 0 && search.stderr.contains("first export in progress (2 of 5 objects, 40%): results are incomplete"), "\(search.stderr)")
        #expect(try CLI.run(["dump", "--store", store]).stderr.contains("results are incomplete"))
        let status = try CLI.run(["status", "--store", store])
        #expect(status.stdout.contains("first export in progress (2 of 5 objects, 40%)") && !status.stdout.contains("lag 0"), "\(status.stdout)")
        let json = try #require(try CLI.json(try CLI.run(["status", "--store", store, "--format", "json"]).stdout) as? [String: Any])
        let first = try #require((json["stores"] as? [[String: Any]])?.first)
        #expect(first["exportInProgress"] as? Bool == true && first["lag"] is NSNull)
        let export = try #require(first["export"] as? [String: Any])
        #expect(export["kind"] as? String == "firstExport" && export["objectsExported"] as? Int == 2 && export["objectCount"] as? Int == 5)
        // A rebuild answers from the previous build meanwhile, and says so.
        try setExportState("1 0 2 sweep 2/5")
        // Asked for JSON, every stderr line is JSON: the note too.
        let quiet = try CLI.run(["search", "sydney", "--store", store, "--format", "jsonl"])
        let notes = try quiet.stderr.split(separator: "\n").map { try #require(try CLI.json(String($0)) as? [String: Any]) }
        #expect(notes.count == 1 && ((notes.first?["note"] as? [String: Any])?["message"] as? String)?.contains("2 of 5 objects") == true, "\(quiet.stderr)")
        let rebuilding = try CLI.run(["search", "sydney", "--store", store])
        #expect(rebuilding.status == 0 && rebuilding.stderr.contains("rebuild in progress (2 of 5 objects, 40%): results come from the previous build"), "\(rebuilding.stderr)")
        // A state written before counts were kept still reads as a first export, without a count.
        try setExportState("1 0 2")
        #expect(try CLI.run(["search", "sydney", "--store", store]).stderr.contains("first export in progress: results are incomplete"))
        try setExportState("1 0 2 sweep")
        let old = try #require(try CLI.json(try CLI.run(["status", "--store", store, "--format", "json"]).stdout) as? [String: Any])
        let oldExport = try #require(((old["stores"] as? [[String: Any]])?.first)?["export"] as? [String: Any])
        #expect(oldExport["kind"] as? String == "rebuild" && oldExport["objectCount"] is NSNull)
    }
}
