/// The Redis serialization protocol, as much of it as the bench speaks: commands as arrays of bulk strings.
enum RESP {
    static func command(_ arguments: [String]) -> [UInt8] {
        var out: [UInt8] = []
        append(arguments.map { Array($0.utf8) }, to: &out)
        return out
    }

    /// Appends `*n\r\n$len\r\narg\r\n…` without building strings, for the pipelined publisher.
    static func append(_ arguments: [[UInt8]], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "*"))
        ChangeDriver.appendInt(arguments.count, to: &out)
        out.append(contentsOf: [0x0D, 0x0A])
        for argument in arguments {
            out.append(UInt8(ascii: "$"))
            ChangeDriver.appendInt(argument.count, to: &out)
            out.append(contentsOf: [0x0D, 0x0A])
            out.append(contentsOf: argument)
            out.append(contentsOf: [0x0D, 0x0A])
        }
    }
}
