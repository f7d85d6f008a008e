import Foundation
import Indexer

/// Shows a first export's progress on stderr: a bar redrawn in place on a terminal, a plain line every
/// few seconds otherwise (a log file reads well), nothing left behind when it ends.
final class ProgressDisplay {
    private let isTerminal: Bool
    private let interval: UInt64
    private var lastShown: UInt64 = 0
    private var drawn = false
    private var completed = false

    init(isTerminal: Bool = Terminal.isTerminal(STDERR_FILENO)) {
        self.isTerminal = isTerminal
        interval = isTerminal ? 100_000_000 : 2_000_000_000
    }

    /// Shows `progress` if enough time passed since the last time (always the first and the last time).
    func show(_ progress: ExportProgress) {
        let now = DispatchTime.now().uptimeNanoseconds
        let last = progress.objectsRead >= progress.objectCount
        guard !completed, !drawn || last || now - lastShown >= interval else { return }
        lastShown = now
        drawn = true
        completed = last && progress.objectsRead > 0
        if isTerminal {
            let text = Self.line(progress, width: Terminal.width(STDERR_FILENO) ?? 80)
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        } else if progress.objectsRead > 0 {
            FileHandle.standardError.write(Data("searchctl: progress: \(Self.summary(progress))\n".utf8))
        }
    }

    /// Clears the bar so the summary line starts on a clean line.
    func finish() {
        if isTerminal && drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        drawn = false
        completed = false
    }

    /// `120,000 of 235,160 objects (51%), 21,300/s, about 5 s left`
    static func summary(_ progress: ExportProgress) -> String {
        var text = "\(progress.objectsRead.grouped) of \(progress.objectCount.grouped) objects (\(Int(progress.fraction * 100))%)"
        if progress.rate > 0 { text += ", \(Int(progress.rate).grouped)/s" }
        if let left = progress.secondsLeft, progress.objectsRead < progress.objectCount { text += ", about \(duration(left)) left" }
        return text
    }

    /// `exporting Place [#########.........] 51%  120,000/235,160  21,300/s  ETA 5 s`, cut to the width.
    static func line(_ progress: ExportProgress, width: Int) -> String {
        var tail = " \(Int(progress.fraction * 100))%  \(progress.objectsRead.grouped)/\(progress.objectCount.grouped)"
        if progress.rate > 0 { tail += "  \(Int(progress.rate).grouped)/s" }
        if let left = progress.secondsLeft, progress.objectsRead < progress.objectCount { tail += "  ETA \(duration(left))" }
        let head = "exporting \(progress.entity) "
        // The widest tail this export can have, so the bar keeps its size while the numbers change.
        let count = progress.objectCount.grouped.count
        let widestTail = 7 + 2 * count + 1 + 2 + count + 2 + 17
        let barWidth = min(30, width - 1 - head.displayWidth - widestTail - 2)
        guard barWidth >= 5 else { return String((head + tail).prefix(max(0, width - 1))) }
        let filled = Int(progress.fraction * Double(barWidth))
        return head + "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled) + "]" + tail
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return whole < 60 ? "\(whole) s" : "\(whole / 60) min \(whole % 60) s"
    }
}
