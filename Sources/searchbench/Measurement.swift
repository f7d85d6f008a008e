import Foundation

/// Wall-clock timing for benchmarks.
enum Clock {
    /// Seconds `body` takes, on the monotonic clock.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// A line describing the machine, printed with every result table.
func machineDescription() -> String {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
    var cpu = "unknown CPU"
    if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
       let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
       let name = line.split(separator: ":", maxSplits: 1).last {
        cpu = name.trimmingCharacters(in: .whitespaces)
    }
    return "\(cpu), \(cores) cores, \(String(format: "%.0f", memory)) GiB"
}

/// `1234567` → `1,234,567`.
func grouped(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var result = ""
    for (index, character) in digits.reversed().enumerated() {
        if index > 0 && index % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return String(result.reversed())
}
