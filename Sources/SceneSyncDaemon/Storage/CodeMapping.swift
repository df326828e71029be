/// A mapping of the executable's code, as `/proc/self/smaps` lists it: what ``StartupMemory`` may drop.
struct CodeMapping: Equatable {
    var start: Int
    var end: Int
    /// Pages of the mapping that are private copies (written to since they were mapped).
    var anonymousKilobytes: Int

    /// The readable, executable, private mappings of `executable` in `smaps`, each with its `Anonymous:` figure; a
    /// mapping whose figure is missing is left out, since nothing then says its pages are all clean.
    static func parse(smaps: [UInt8], executable: String) -> [CodeMapping] {
        var found: [CodeMapping] = []
        var current: (start: Int, end: Int)?
        for line in smaps.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains(UInt8(ascii: "-")), fields.count >= 5 {
                // A mapping's header: `start-end perms offset dev inode [path]`.
                current = nil
                let path = fields.count >= 6 ? String(decoding: fields[5], as: UTF8.self) : ""
                guard path == executable, fields[1].elementsEqual("r-xp".utf8) else { continue }
                let bounds = first.split(separator: UInt8(ascii: "-"))
                guard bounds.count == 2, let start = hex(bounds[0]), let end = hex(bounds[1]), end > start else {
                    continue
                }
                current = (start, end)
            } else if let mapping = current, first.elementsEqual("Anonymous:".utf8), fields.count >= 2,
                let kilobytes = Int(String(decoding: fields[1], as: UTF8.self))
            {
                found.append(CodeMapping(start: mapping.start, end: mapping.end, anonymousKilobytes: kilobytes))
                current = nil
            }
        }
        return found
    }

    private static func hex(_ digits: ArraySlice<UInt8>) -> Int? {
        Int(String(decoding: digits, as: UTF8.self), radix: 16)
    }
}
