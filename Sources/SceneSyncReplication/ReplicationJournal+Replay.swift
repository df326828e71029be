import SceneSyncCore

/// Reading the file back at start: which lines are a crash's torn append, and which are damage.
extension ReplicationJournal {
    /// A line of the file, other than a torn last one, that is not a line the journal writes: a bad disk block, an
    /// edit by hand. Replaying past it could push a change twice or never, so the journal stops there.
    ///
    /// A journal that is no file at all (see ``ReplicationJournal/readJournal(_:)``), or that is empty or missing
    /// while the stream record says this host replicated before (``ReplicationJournal/StreamRecord``), is damage
    /// without a line.
    struct Damage: Error, Sendable, Equatable, CustomStringConvertible {
        /// 1-based; `nil` when the damage is the file's, not one line's.
        var line: Int?
        var reason: String
        var description: String { line.map { "line \($0): \(reason)" } ?? reason }
    }

    /// Replays the file's lines into `state`: the damage that stopped it, if any, and whether a torn last line was
    /// skipped. A torn line is one that does not parse, is the last, and follows others (every start writes the
    /// file whole, durably, so its first lines are never torn); NUL bytes a power loss left count as one. Anything
    /// else that is not a journal line (an empty line, bad JSON before the end, a line of an unknown kind or
    /// missing its fields, even the last) is damage.
    static func replay(_ bytes: [UInt8], into state: inout State) -> (damage: Damage?, skippedTornLine: Bool) {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            let isLast = index == lines.count - 1
            if isLast && line.isEmpty { break }
            let problem: String
            if line.isEmpty {
                problem = "an empty line"
            } else {
                do throws(JSONError) {
                    guard let rejected = replay(try JSONParser.parse(Array(line)), into: &state) else { continue }
                    problem = rejected
                } catch {
                    // Only an append a crash cut short: the last line, after the lines every start writes whole.
                    if isLast, index > 0 { return (nil, true) }
                    problem = "not JSON (\(error))"
                }
            }
            return (Damage(line: index + 1, reason: problem), false)
        }
        return (nil, false)
    }
}
