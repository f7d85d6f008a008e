import Foundation

/// The test process's own folder under the temporary directory, removed when the process exits: tests make
/// their folders and files in it, so a run of the suite leaves nothing behind (runs used to leave gigabytes).
public enum Scratch {
    /// The folder, made at first use.
    public static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Scratch.folder) }
        return url
    }()
}
