/// An aligned text table: columns padded to their widest cell, numbers right-aligned, the last column unpadded so
/// that long paths do not drag trailing spaces.
struct Table {
    var headers: [String]
    /// Indexes of columns to right-align.
    var rightAligned: Set<Int> = []
    var rows: [[String]] = []

    init(_ headers: [String], rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rightAligned = rightAligned
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    func lines() -> [String] {
        let all = [headers] + rows
        var widths = [Int](repeating: 0, count: headers.count)
        for row in all {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        return all.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                let isLast = column == row.count - 1
                let padding = String(repeating: " ", count: max(0, widths[min(column, widths.count - 1)] - cell.count))
                if column > 0 { line += "  " }
                if rightAligned.contains(column) {
                    line += padding + cell
                } else {
                    line += isLast ? cell : cell + padding
                }
            }
            return line
        }
    }

    func print() {
        for line in lines() { Output.line(line) }
    }
}
