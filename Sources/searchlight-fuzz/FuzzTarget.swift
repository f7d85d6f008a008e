import Foundation

/// One libFuzzer target: a name for `SEARCHLIGHT_FUZZ_TARGET` and what it does with each input.
///
/// `run` must return normally for every input the product handles (a thrown error is a clean refusal) and
/// crash — `fatalError`, a sanitizer report — when an invariant breaks. `prepare` does the one-time set-up
/// (a model, a database) before the first input, so its cost and its failures are not blamed on an input.
struct FuzzTarget: Sendable {
    let name: String
    let prepare: @Sendable () -> Void
    let run: @Sendable (Data) -> Void

    init(name: String, prepare: @escaping @Sendable () -> Void = {}, run: @escaping @Sendable (Data) -> Void) {
        self.name = name
        self.prepare = prepare
        self.run = run
    }

    /// Every target; `scripts/fuzz --list` describes them.
    static let all: [FuzzTarget] = [
        PropertyListTarget.target, ModelCacheTarget.target, DeflateTarget.target, ModelXMLTarget.target,
        ConfigurationTarget.target, QueryTarget.target, HistoryTarget.target, TokenizerTarget.target, RankTarget.target, PredicateTarget.target,
        PostgresTarget.target, VectorTarget.target, FacetsTarget.target,
    ]

    /// The target this process fuzzes, read once from `SEARCHLIGHT_FUZZ_TARGET`.
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["SEARCHLIGHT_FUZZ_TARGET"] ?? ""
        guard let target = all.first(where: { $0.name == name }) else {
            let known = all.map(\.name).joined(separator: ", ")
            FileHandle.standardError.write(Data("searchlight-fuzz: set SEARCHLIGHT_FUZZ_TARGET to one of: \(known) (got '\(name)'); scripts/fuzz does\n".utf8))
            exit(64)
        }
        return target
    }()
}

/// libFuzzer calls this once before the first input.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> Int32 {
    FuzzTarget.selected.prepare()
    return 0
}

/// libFuzzer calls this with every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    FuzzTarget.selected.run(data)
    return 0
}
