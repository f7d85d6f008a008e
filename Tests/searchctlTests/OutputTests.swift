import CoreDataStore
import CoreDataStoreWriter
import Foundation
import Testing
import TestScratch

/// Every command's output shape, for scripts (uris, json, jsonl) and for people (table, text), on a small
/// store of real places written by the project's writer with the Corpus model.
@Suite("searchctl output: formats, widths, colour, usage errors", .ownThread)
struct OutputTests {
    static let places: [(name: String, alternate: String, latitude: Double, longitude: Double, population: Int64)] = [
        ("Yokohama", "横浜,요코하마", 35.44778, 139.6425, 3_574_443),
        ("Tokyo", "東京,Edo", 35.6895, 139.69171, 8_336_599),
        ("Zürich", "Zurich,Zuerich", 47.36667, 8.55, 341_730),
        ("Winterthur", "Winterthour", 47.50564, 8.72413, 111_851),
        ("Uster", "", 47.34713, 8.72091, 35_337),
        ("Geneva", "Genève,Genf", 46.20222, 6.14569, 183_981),
    ]

    /// A store and its index, built once per test (tests run in parallel, each on its own files).
    static func indexedStore() throws -> String {
        let directory = Scratch.folder.appendingPathComponent("output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("Places.sqlite").path
        let writer = try StoreWriter.create(at: store, model: try ManagedObjectModel(contentsOf: IndexCrashTests.corpusModel))
        var save = SaveRequest()
        let japan = save.insert("Country", attributes: ["code": .string("JP"), "name": .string("Japan")])
        let switzerland = save.insert("Country", attributes: ["code": .string("CH"), "name": .string("Switzerland")])
        for place in places {
            save.insert("Place", attributes: ["name": .string(place.name), "asciiName": .string(place.name), "alternateNames": .string(place.alternate),
                                              "latitude": .double(place.latitude), "longitude": .double(place.longitude), "population": .integer(place.population)],
                        relationships: ["country": .toOne(place.latitude > 40 ? switzerland : japan)])
        }
        try writer.save(save)
        let config = CLI.projectRoot.appendingPathComponent("Corpus/places-config.json").path
        let result = try CLI.run(["index", "--store", store, "--config", config])
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    @Test("search: uris, json, jsonl and table carry the same hits in the same order")
    func searchFormats() throws {
        let store = try Self.indexedStore()
        let uris = try CLI.run(["search", "横浜", "--store", store])
        #expect(uris.status == 0 && uris.lines.count == 1 && uris.lines[0].hasPrefix("x-coredata://") && uris.lines[0].contains("/Place/p"))
        let near = ["--near", "47.3769,8.5417", "--radius", "30km", "--store", store]
        let list = try CLI.run(["search"] + near).lines
        #expect(list.count == 3) // Zürich, Uster, Winterthur; not Geneva (224 km)
        // json is one document: the total found (every match, not only this page) and the hits.
        let document = try #require(try CLI.json(try CLI.run(["search", "--format", "json"] + near).stdout) as? [String: Any])
        #expect(document["found"] as? Int == 3)
        let json = try #require(document["hits"] as? [[String: Any]])
        #expect(json.map { $0["uri"] as? String } == list)
        let page = try #require(try CLI.json(try CLI.run(["search", "--format", "json", "--limit", "1"] + near).stdout) as? [String: Any])
        #expect(page["found"] as? Int == 3 && (page["hits"] as? [Any])?.count == 1)
        #expect(json.map { $0["displayName"] as? String } == ["Zürich", "Uster", "Winterthur"])
        for hit in json {
            #expect(hit["entity"] as? String == "Place" && hit["score"] is Double && hit["latitude"] is Double && hit["longitude"] is Double)
            #expect((hit["distanceMeters"] as? Double).map { $0 <= 30_000 } == true)
        }
        let jsonl = try CLI.run(["search", "--format", "jsonl"] + near).lines.map { try #require(try CLI.json($0) as? [String: Any]) }
        #expect(jsonl.map { $0["uri"] as? String } == list)
        let snippets = try #require((try CLI.json(try CLI.run(["search", "zuerich", "--snippets", "--format", "json", "--store", store]).stdout) as? [String: Any])?["hits"] as? [[String: Any]])
        #expect(snippets.first?["snippet"] as? String == "[Zuerich]" || (snippets.first?["snippet"] as? String)?.contains("[Zuerich]") == true)
        let table = try CLI.run(["search", "--format", "table"] + near)
        #expect(table.lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["NAME", "ENTITY", "SCORE", "DISTANCE", "URI"])
        #expect(table.lines.count == 5 && table.lines[1].hasPrefix("Zürich") && table.lines[1].contains(list[0]) && table.lines[1].contains(" km"))
        #expect(table.lines.last == "3 of 3 found")
        // Nearest 5 to a coordinate, without a query: by distance.
        let nearest = try #require((try CLI.json(try CLI.run(["search", "--near", "35.5,139.6", "--limit", "5", "--format", "json", "--store", store]).stdout) as? [String: Any])?["hits"] as? [[String: Any]])
        #expect(nearest.map { $0["displayName"] as? String }.prefix(2) == ["Yokohama", "Tokyo"] && nearest.count == 5)
        let distances = nearest.compactMap { $0["distanceMeters"] as? Double }
        #expect(distances == distances.sorted())
    }

    @Test("index: one summary line on stdout; --print-config is the configuration format with defaults filled in")
    func indexOutput() throws {
        let store = try Self.indexedStore()
        let config = CLI.projectRoot.appendingPathComponent("Corpus/places-config.json").path
        let again = try CLI.run(["index", "--store", store, "--config", config])
        let pattern = #"^indexed \S+: \d+ inserted, \d+ updated, \d+ deleted; token \d+; \d+\.\d\d s → \S+\.searchindex$"#
        #expect(again.status == 0 && again.lines.count == 1 && again.lines[0].range(of: pattern, options: .regularExpression) != nil, "\(again.stdout)")
        #expect(again.lines[0].contains(": 0 inserted, 0 updated, 0 deleted; token 1; "))
        #expect(try CLI.run(["index", "--store", store, "--config", config, "--quiet"]).stdout.isEmpty)
        // Without --config, --print-config shows what index would use: the configuration the index keeps.
        #expect(try CLI.run(["index", "--store", store, "--print-config"]).stdout.contains("country.code"))
        // An empty configuration asks for the zero-configuration defaults outright.
        let empty = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("empty.json")
        try Data(#"{"entities": {}}"#.utf8).write(to: empty)
        let printed = try CLI.run(["index", "--store", store, "--config", empty.path, "--print-config"])
        let entities = try #require((try CLI.json(printed.stdout) as? [String: Any])?["entities"] as? [String: Any])
        let place = try #require(entities["Place"] as? [String: Any])
        // Zero configuration on the Corpus model: the name shown, the other Spotlight-marked properties (the
        // relationship contributes the country's display name), the coordinates.
        #expect(place["displayName"] as? String == "name" && place["latitude"] as? String == "latitude" && place["longitude"] as? String == "longitude")
        #expect(Set(place["text"] as? [String] ?? []) == ["asciiName", "alternateNames", "country"])
        // What --print-config prints, --config reads back, to the same effective configuration.
        let copy = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("printed.json")
        try Data(printed.stdout.utf8).write(to: copy)
        #expect(try CLI.run(["index", "--store", store, "--config", copy.path, "--print-config"]).stdout == printed.stdout)
    }

    @Test("tables fit the terminal's width: names and snippets are cut with …, URIs never")
    func tableWidth() throws {
        let store = try Self.indexedStore()
        let wide = try CLI.run(["search", "zurich", "--format", "table", "--snippets", "--store", store])
        let narrow = try CLI.run(["search", "zurich", "--format", "table", "--snippets", "--store", store], environment: ["COLUMNS": "110"])
        let uri = try #require(try CLI.run(["search", "zurich", "--store", store]).lines.first)
        #expect(wide.lines.map(\.count).max().map { $0 > 110 } == true)
        #expect(narrow.lines.allSatisfy { $0.count <= 110 } && narrow.lines[1].contains(uri) && narrow.lines[1].contains("…"), "\(narrow.stdout)")
    }

    @Test("colour only on a terminal and never with NO_COLOR", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux script(1) is not installed"))
    func colour() throws {
        let store = try Self.indexedStore()
        func onTerminal(_ environment: String) throws -> String {
            // `env -u NO_COLOR`: the test runner's own environment must not decide the outcome.
            let command = "env -u NO_COLOR \(environment) \(CLI.executable.path) search tokyo --format table --store \(store)"
            return try CLI.runProgram("/usr/bin/script", ["-qec", command, "/dev/null"]).stdout
        }
        let coloured = try onTerminal("TERM=xterm")
        #expect(coloured.contains("\u{1B}[1m"), "\(coloured)")
        #expect(try !onTerminal("TERM=xterm NO_COLOR=1").contains("\u{1B}["))
        #expect(try !CLI.run(["search", "tokyo", "--format", "table", "--store", store]).stdout.contains("\u{1B}["))
        #expect(try onTerminal("TERM=xterm").contains("Tokyo"))
    }

    @Test("dump, status and explain: their shapes in every format")
    func inspection() throws {
        let store = try Self.indexedStore()
        let dump = try CLI.run(["dump", "--store", store])
        let items = try dump.lines.map { try #require(try CLI.json($0) as? [String: Any]) }
        #expect(items.count == 8 && items.map { $0["uri"] as? String } == items.map { $0["uri"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") })
        let zurich = try #require(items.first { $0["displayName"] as? String == "Zürich" })
        #expect(Set(zurich.keys).isSuperset(of: ["uri", "entity", "displayName", "title", "text", "keywords", "latitude", "longitude", "date"]))
        #expect((zurich["text"] as? [String])?.contains("Switzerland") == true && (zurich["keywords"] as? [String])?.contains("CH") == true)
        let countries = try CLI.run(["dump", "--store", store, "--entity", "Country", "--format", "table"])
        #expect(countries.lines.count == 3 && countries.lines[0].hasPrefix("URI") && countries.stdout.contains("Switzerland"))

        let status = try #require(try CLI.json(try CLI.run(["status", "--store", store, "--format", "json"]).stdout) as? [String: Any])
        #expect((status["items"] as? [String: Int]) == ["Country": 2, "Place": 6] && status["located"] as? Int == 6 && status["writerPID"] is NSNull)
        let text = try CLI.run(["status", "--store", store])
        #expect(text.status == 0 && text.stdout.contains("token 1; newest 1, lag 0") && text.stdout.contains("writer: none"))

        let explain = try CLI.run(["explain", "zurich", "--near", "47.37,8.54", "--radius", "30km", "--store", store])
        #expect(explain.status == 0 && explain.lines.first?.hasPrefix("query: [word zurich") == true && explain.stdout.contains("query plan:"))
        #expect(explain.lines.contains { $0.hasPrefix("plan: ") } && explain.stdout.contains("items_fts MATCH ?"))
        let json = try #require(try CLI.json(try CLI.run(["explain", "zurich", "--store", store, "--format", "json"]).stdout) as? [String: Any])
        #expect(json["plan"] as? String == "text" && (json["fts5"] as? String)?.contains("\"zurich\"") == true && json["hits"] as? Int == 1)
        let statement = try #require((json["statements"] as? [[String: Any]])?.first)
        #expect((statement["sql"] as? String)?.contains("MATCH") == true && (statement["queryPlan"] as? [String])?.isEmpty == false)
        #expect(try CLI.run(["explain", "--store", store, "--", "-zurich"]).status == 64)
    }

    @Test("usage errors are one line naming the fix; help and completion scripts work for every command")
    func usage() throws {
        let cases: [[String]] = [
            ["bogus"], ["search", "--limit", "x"], ["index"], ["search", "--format", "xml", "a"], ["resolve"],
            ["history"], ["model"], ["status", "--format", "yaml"], ["explain", "--sort", "random:up", "a"], ["dump", "--entity"],
            ["index", "--store", "x", "--progress", "--quiet"],
        ]
        for arguments in cases {
            let result = try CLI.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("searchctl: error: ") && result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("--help"),
                    "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        for command in ["index", "search", "explain", "dump", "status", "model", "history", "resolve"] {
            let help = try CLI.run([command, "--help"])
            #expect(help.status == 0 && help.stdout.contains("USAGE: searchctl \(command)") && help.stdout.contains("searchctl \(command) "), "\(command)")
            // Examples are whole lines a reader can copy: none wrapped by the help formatter.
            let examples = help.stdout.components(separatedBy: "Example").dropFirst().first?.components(separatedBy: "USAGE:").first ?? ""
            for line in examples.split(separator: "\n").dropFirst() where !line.isEmpty {
                #expect(line.hasPrefix("  searchctl ") || line.hasPrefix("    "), "\(command): \(line)")
            }
        }
        for shell in ["bash", "zsh", "fish"] {
            let script = try CLI.run(["--generate-completion-script", shell])
            #expect(script.status == 0 && script.stdout.contains("searchctl") && script.stdout.contains("explain"), "\(shell)")
        }
    }

    @Test("typos from the command line: found and marked, --exact, a suggestion on stderr (text and JSON), explain's expansions")
    func typos() throws {
        let store = try Self.indexedStore()
        let found = try CLI.run(["search", "zurch", "--store", store, "--format", "jsonl"])
        let hits = try found.lines.map { try #require(try CLI.json($0) as? [String: Any]) }
        #expect(found.status == 0 && hits.first?["displayName"] as? String == "Zürich" && hits.allSatisfy { $0["typos"] as? Int == 1 })
        let exact = try CLI.run(["search", "zurch", "--exact", "--store", store])
        #expect(exact.status == 1 && exact.stdout.isEmpty)
        #expect(exact.stderr.contains("note: nothing matches that word: 'zurch' → 'zurich'; did you mean: zurich"), "\(exact.stderr)")
        let json = try CLI.run(["search", "tokyo", "zurch", "--exact", "--store", store, "--format", "json"])
        let note = try #require(try CLI.json(json.stderr.split(separator: "\n").first.map(String.init) ?? "") as? [String: Any])
        #expect(json.status == 1 && ((note["note"] as? [String: Any])?["message"] as? String)?.hasSuffix("did you mean: tokyo zurich") == true)
        let explain = try CLI.run(["explain", "zurch", "--store", store])
        #expect(explain.lines.first == "query: [word zurch ~ zurich (1 edit)]" && explain.lines.dropFirst().first == "fts5: (\"zurch\" OR \"zurich\")")
        #expect(try CLI.run(["explain", "zurch", "--exact", "--store", store]).lines.first == "query: [word zurch]")
    }

    @Test("saved searches from the command line: listed, run with --var, combined with words and options, errors exit 64")
    func savedSearches() throws {
        let store = try Self.indexedStore()
        let listed = try CLI.run(["saved", "--store", store])
        #expect(listed.status == 0 && listed.lines.first?.hasPrefix("NAME") == true && listed.stdout.contains("bigCities") && listed.stdout.contains("$MIN $NAME"))
        let json = try #require(try CLI.json(try CLI.run(["saved", "--store", store, "--format", "json"]).stdout) as? [[String: Any]])
        #expect(json.map { $0["name"] as? String } == ["bigCities", "citiesOf", "updatedSince"] && json[0]["from"] as? String == "configuration")
        // Places of Japan above a million, most populous first: Tokyo, then Yokohama.
        let big = try CLI.run(["search", "--saved", "citiesOf", "--var", "CODE=JP", "--var", "MIN=1000000", "--store", store, "--format", "jsonl"])
        #expect(big.status == 0 && big.lines.compactMap { try? CLI.json($0) as? [String: Any] }.map { $0["displayName"] as? String } == ["Tokyo", "Yokohama"])
        // Words on the command line join the saved query; --var values are text where the template needs text.
        let words = try CLI.run(["search", "--saved", "bigCities", "--var", "NAME=yoko*", "--var", "MIN=1", "--store", store])
        #expect(words.status == 0 && words.lines.count == 1)
        #expect(try CLI.run(["search", "--saved", "bigCities", "--var", "NAME=yoko*", "--var", "MIN=1", "tokyo", "--store", store]).status == 1)
        for arguments in [["--saved", "bigCities", "--var", "MIN=1"], ["--saved", "nope"], ["--saved", "bigCities", "--var", "MIN=1", "--var", "NAME=x", "--var", "X=1"],
                          ["--var", "MIN=1"], ["--saved", "citiesOf", "--var", "CODE"],
                          ["--saved", "citiesOf", "--var", "CODE=JP", "--var", "MIN=1", "--where", "population > $MIN"],
                          ["--saved", "citiesOf", "--var", "CODE=JP", "--var", "MIN=1", "--entity", "Country"]] {
            let result = try CLI.run(["search"] + arguments + ["--store", store])
            #expect(result.status == 64 && result.stderr.hasPrefix("searchctl: error:"), "\(arguments): \(result.stderr)")
        }
        #expect(try CLI.run(["search", "--saved", "bigCities", "--var", "MIN=1", "--store", store]).stderr.contains("needs $NAME: add --var NAME="))
    }
}
