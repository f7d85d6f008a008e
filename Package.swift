// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Searchlight",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CoreDataStore", targets: ["CoreDataStore"]),
        .library(name: "SearchIndex", targets: ["SearchIndex"]),
        .library(name: "Indexer", targets: ["Indexer"]),
        // Writes stores as Core Data does, for tests, demos and appsim: not for an app's own store.
        .library(name: "CoreDataStoreWriter", targets: ["CoreDataStoreWriter"]),
        .executable(name: "searchctl", targets: ["searchctl"]),
        .executable(name: "searchbench", targets: ["searchbench"]),
        .executable(name: "appsim", targets: ["appsim"]),
        // The index on PostgreSQL + PostGIS (issue 16): empty unless built with `--traits PostgreSQL`.
        .library(name: "PostgresIndex", targets: ["PostgresIndex"]),
    ],
    traits: [
        // The PostgreSQL backend: builds postgres-nio (minutes on two cores), so the default build and the
        // Quick start leave it out. `swift build --traits PostgreSQL`, `swift test --traits PostgreSQL`.
        .trait(name: "PostgreSQL"),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        // `swift package generate-documentation`: the libraries' DocC catalogs, built in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        // Raw DEFLATE for Z_MODELCACHE: Core Data stores the model archive without a zlib header.
        .target(
            name: "CZlib",
            linkerSettings: [.linkedLibrary("z")]),
        // What both storage modules need about SQLite without sharing any SQL: immutable URIs, C-API binding.
        .target(
            name: "SQLiteFiles",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        .target(
            name: "CoreDataStore",
            dependencies: [
                "CZlib", "SQLiteFiles",
                .product(name: "GRDB", package: "GRDB.swift"),
                // Bulk reads step prepared statements with the C API: GRDB's row cursor alone costs
                // a third of the raw read rate (see searchbench store-read).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // Writes stores as Core Data does (DDL, saves, history); reaches the reader's layout through `package` API.
        .target(
            name: "CoreDataStoreWriter",
            dependencies: [
                "CoreDataStore", "SQLiteFiles",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // The FTS5 tokenizer on ICU. ICU headers stay inside its .c file: a Swift module that imports
        // Foundation and sees them fails to build (shared/reference/swift-on-linux.md).
        .target(
            name: "CSearchTokenizer",
            linkerSettings: [
                .linkedLibrary("icui18n"), .linkedLibrary("icuuc"), .linkedLibrary("icudata"), .linkedLibrary("sqlite3"),
            ]),
        .target(
            name: "SearchIndex",
            dependencies: [
                "CSearchTokenizer", "SQLiteFiles",
                .product(name: "GRDB", package: "GRDB.swift"),
                // Batches bind values straight onto prepared statements (see searchbench index).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // The index on PostgreSQL + PostGIS: the same items, checkpoints and answers as SearchIndex's SQLite
        // file, for many stores and many machines. Compiled only with the PostgreSQL trait.
        .target(
            name: "PostgresIndex",
            dependencies: [
                "SearchIndex", "CSearchTokenizer",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQL"])),
            ]),
        // The exporter: follows a store's history into the index. Talks to both storage modules' APIs, no SQL.
        .target(
            name: "Indexer",
            dependencies: ["CoreDataStore", "SearchIndex"]),
        // Reproducible randomness for the tools and tests: SplitMix64 and jittered copies of a data set.
        .target(name: "SeededRandom"),
        // Acts like an app: builds a store from the Corpus and edits it at a rate.
        .executableTarget(
            name: "appsim",
            dependencies: [
                "CoreDataStore", "CoreDataStoreWriter", "CZlib", "SeededRandom",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Test helper: writes batches until a test kills it (crash-atomicity tests).
        .executableTarget(
            name: "index-crash-helper",
            dependencies: ["SearchIndex"]),
        .executableTarget(
            name: "searchctl",
            dependencies: [
                // PostgresIndex is only a location parser and an error without the PostgreSQL trait.
                "CoreDataStore", "SearchIndex", "Indexer", "PostgresIndex",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "searchbench",
            dependencies: [
                "CoreDataStore",
                "CoreDataStoreWriter",
                "SearchIndex",
                // searchbench storm reads the index's deferred dependents as the exporter wrote them.
                "Indexer",
                // searchbench fleet: PostgreSQL beside SQLite (a location parser alone without the trait).
                "PostgresIndex",
                "SeededRandom",
                // The export ceiling tokenizes with the same FTS5 tokenizer, registered on a raw connection.
                "CSearchTokenizer",
                // The baseline talks to SQLite's C API directly.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Test helpers: one scratch folder per test process, removed at exit; a trait that runs waiting tests
        // on threads of their own (SearchIndex's thread executor).
        .target(name: "TestScratch", dependencies: ["SearchIndex"], path: "Tests/TestScratch"),
        .testTarget(
            name: "CoreDataStoreTests",
            dependencies: ["TestScratch", "CoreDataStore", "CoreDataStoreWriter", "SeededRandom", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "SearchIndexTests",
            dependencies: ["TestScratch", "SearchIndex", "CSearchTokenizer", "index-crash-helper", "SeededRandom", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "IndexerTests",
            dependencies: ["TestScratch", "Indexer", "CoreDataStore", "CoreDataStoreWriter", "SearchIndex", "SeededRandom", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "AppSimTests",
            dependencies: ["TestScratch", "CoreDataStore", "CoreDataStoreWriter", "CZlib", "appsim", .product(name: "GRDB", package: "GRDB.swift")]),
        // Starts its own PostgreSQL clusters on 127.0.0.1 (initdb, pg_ctl); compiled only with the PostgreSQL trait.
        .testTarget(
            name: "PostgresIndexTests",
            dependencies: ["TestScratch", "PostgresIndex", "SearchIndex", "Indexer", "CoreDataStore", "CoreDataStoreWriter", "searchctl", "SeededRandom"]),
        .testTarget(
            name: "searchctlTests",
            dependencies: ["TestScratch", "CoreDataStore", "CoreDataStoreWriter", "searchctl"]),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (scripts/fuzz), only when SEARCHLIGHT_FUZZ=1 is set as the manifest is evaluated: they link
// with -sanitize=fuzzer, which a plain `swift build` or `swift test` must never see. One executable for every
// target (chosen by SEARCHLIGHT_FUZZ_TARGET at run time), so an instrumented build of the modules is linked once.
if Context.environment["SEARCHLIGHT_FUZZ"] == "1" {
    package.targets += [
        // main(): SwiftPM points an executable's main at <module>_main, which libFuzzer's own main cannot be.
        .target(name: "CFuzzDriver"),
        .executableTarget(
            name: "searchlight-fuzz",
            dependencies: ["CFuzzDriver", "CoreDataStore", "SearchIndex", "CSearchTokenizer", "Indexer", "PostgresIndex", .product(name: "GRDB", package: "GRDB.swift")]),
    ]
    package.products.append(.executable(name: "searchlight-fuzz", targets: ["searchlight-fuzz"]))
}
