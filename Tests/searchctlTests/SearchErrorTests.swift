import Foundation
import Testing
import TestScratch

@Suite("searchctl index and search: error paths", .ownThread)
struct SearchErrorTests {
    @Test("every bad input gets its exit code and one line that says what to do", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)))
    func errors() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        #expect(try CLI.run(["index", "--store", store, "--quiet"]).status == 0)
        let garbage = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("garbage.searchindex")
        try Data(repeating: 0x41, count: 8192).write(to: garbage)
        let badConfig = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("bad.json")
        try Data(#"{"entities": {"Book": {"text": ["author.aliass"]}}}"#.utf8).write(to: badConfig)
        // An index that holds nothing: every entity left out.
        let empty = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("empty.searchindex").path
        let nothing = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("nothing.json")
        try Data(#"{"entities": {"Book": false, "GraphicNovel": false, "Feedback": false, "Page": false, "Author": false}}"#.utf8).write(to: nothing)
        #expect(try CLI.run(["index", "--store", store, "--index", empty, "--config", nothing.path, "--quiet"]).status == 0)
        let cases: [([String], Int32, [String])] = [
            (["search", "title", "--index", empty, "--entity", "Book"], 64, ["holds no items yet", "searchctl index --store"]),
            (["search", "title", "--index", "/nonexistent/x.searchindex"], 66, ["no index at", "searchctl index --store"]),
            (["search", "title", "--index", garbage.path], 65, ["not a Searchlight index", "move the file aside"]),
            (["search", "zzzqqqnothing", "--store", store], 1, []),
            (["search", "--store", store, "--", "-title"], 64, ["add at least one word"]),
            (["search", "--store", store], 64, ["--near, --bbox or --where"]),
            (["search", "title", "--near", "91,0", "--store", store], 64, ["latitude 91"]),
            (["search", "--near", "1,2", "--radius", "far", "--store", store], 64, ["500m, 25km"]),
            (["search", "title"], 64, ["--index PATH, --store PATH"]),
            (["index", "--store", store, "--config", badConfig.path], 65, ["character 8", "Author has no property 'aliass'"]),
            (["index", "--store", store, "--config", "/nonexistent.json"], 66, ["no such file"]),
            (["dump", "--index", "/nonexistent/x.searchindex"], 66, ["no index at"]),
            // A store whose default index was never built: the command to build it names that store.
            (["search", "title", "--store", nothing.path], 66, ["no index at", "yet; build it with: searchctl index --store \(nothing.path)"]),
            (["status", "--index", garbage.path], 65, ["not a Searchlight index"]),
            (["explain", "title", "--index", "/nonexistent/x.searchindex"], 66, ["no index at"]),
            (["explain", "\"", "--store", store], 64, []),
            (["dump", "--store", store, "--entity", "Nope"], 64, ["no items of entity 'Nope'", "Author, Book, Feedback, GraphicNovel, Page"]),
            (["search", "title", "--store", store, "--entity", "Books"], 64, ["no items of entity 'Books'"]),
        ]
        for (arguments, status, fragments) in cases {
            let result = try CLI.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            for fragment in fragments { #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)") }
            // Every failure, usage errors of the argument parser included, is one line.
            if status != 0 && status != 1 {
                #expect(result.stderr.hasPrefix("searchctl: error: ") && result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            }
        }
    }
}
