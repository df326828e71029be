import ArgumentParser

/// A comma-separated list of positive counts (`1,10,100`, `100_000`): one sub-run per count.
struct CountList: ExpressibleByArgument, Sendable {
    var values: [Int]

    init(_ values: [Int]) { self.values = values }

    init?(argument: String) {
        let values = argument.split(separator: ",").map { Int(String($0.filter { $0 != "_" })) }
        guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else { return nil }
        self.values = values.compactMap { $0 }
    }

    var defaultValueDescription: String { values.map(String.init).joined(separator: ",") }
}
