/// Human output: columns aligned under upper-case headings, two spaces apart, "-" for no value.
struct TextTable {
    let headings: [String]
    private var rows: [[String]] = []

    init(_ headings: String...) { self.headings = headings }

    mutating func add(_ cells: String?...) {
        rows.append(cells.map { Printable.text($0 ?? "-") })
    }

    func render() -> String {
        let all = [headings] + rows
        let widths = headings.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                line += cell
                if column < row.count - 1 { line += String(repeating: " ", count: widths[column] - cell.count + 2) }
            }
            return line
        }.joined(separator: "\n")
    }
}
