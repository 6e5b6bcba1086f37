import Foundation

/// A stacked bar chart of counts per day, laid out on the server as numbers for an inline SVG
/// (`chart.leaf`): no script, and every label goes through the template's escaping. Has a
/// `<title>`/`<desc>` summary, a legend, the numbers as a table, and an empty state.
struct BarChart: Encodable, Sendable {
    struct Bar: Encodable, Sendable { let x, y, width, height, color, title: String }
    struct Tick: Encodable, Sendable { let y, textY, label: String }
    struct Label: Encodable, Sendable { let x, text, anchor: String }
    struct Legend: Encodable, Sendable { let label, color, total: String }
    struct Row: Encodable, Sendable { let day: String; let values: [String]; let total: String }
    /// One stacked series: a label (user data: escaped by the template) and its count per day.
    struct Series: Sendable { let label: String; let counts: [UsageDay: Int64] }
    /// One bar's place on the x axis (a day, an hour): `id` orders and keys the counts, `label` is
    /// the axis text, `text` the numbers table's.
    struct Slot: Sendable { let id: Int; let label: String; let text: String }
    /// A series over slots, keyed by ``Slot/id``.
    struct SlotSeries: Sendable { let label: String; let counts: [Int: Int64] }

    let id: String
    let heading: String
    let title: String
    let summary: String
    let isEmpty: Bool
    let emptyText: String
    /// What the empty state tells the reader makes counts appear.
    let emptyNote: String
    /// The numbers table's first column: "Day (UTC)", "Hour (UTC)".
    let slotHeading: String
    let width: Int, height: Int, left: Int, right: Int, baseline: String, tickX: Int, labelY: Int, centerX: Int, centerY: Int
    let bars: [Bar]
    let ticks: [Tick]
    let labels: [Label]
    let legend: [Legend]
    let columns: [String]
    let rows: [Row]

    static let palette = ["#3b5bdb", "#12b886", "#f59f00", "#e64980", "#7048e8", "#1098ad", "#f76707"]
    static let otherColor = "#868e96"

    /// Lays out `series` over `days` (oldest first), at most 7 series plus "other" (the rest summed).
    static func stacked(id: String, heading: String, unit: String, days: [UsageDay], series: [Series], otherLabel: String, emptyText: String,
                        emptyNote: String = "Counts appear here after devices sync: each download of a model version and each key a device fetches is counted per day (UTC).") -> BarChart {
        stacked(id: id, heading: heading, unit: unit, slots: days.map { Slot(id: $0.number, label: display($0), text: $0.text) },
                slotName: "day", slotHeading: "Day (UTC)",
                series: series.map { SlotSeries(label: $0.label, counts: Dictionary(uniqueKeysWithValues: $0.counts.map { ($0.key.number, $0.value) })) },
                otherLabel: otherLabel, emptyText: emptyText, emptyNote: emptyNote)
    }

    /// Lays out `series` over `slots` (oldest first), at most 7 series plus "other" (the rest summed).
    static func stacked(id: String, heading: String, unit: String, slots: [Slot], slotName: String, slotHeading: String,
                        series input: [SlotSeries], otherLabel: String, emptyText: String, emptyNote: String) -> BarChart {
        typealias Series = SlotSeries
        let days = slots.map(\.id)
        let slotsByID = Dictionary(slots.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func display(_ id: Int) -> String { slotsByID[id]?.label ?? "" }
        let (width, height, left, right, top, bottom) = (480, 220, 40, 10, 12, 28)
        let plotWidth = Double(width - left - right), plotHeight = Double(height - top - bottom)
        let shown = Set(days)
        func total(_ item: Series) -> Int64 { item.counts.reduce(0) { shown.contains($1.key) ? $0 + $1.value : $0 } }
        let ranked: [(item: Series, total: Int64)] = input.map { (item: $0, total: total($0)) }.filter { $0.total > 0 }
        let sorted = ranked.sorted { (a: (item: Series, total: Int64), b: (item: Series, total: Int64)) -> Bool in
            a.total != b.total ? a.total > b.total : a.item.label < b.item.label
        }
        var series: [Series] = sorted.map { $0.item }
        if series.count > palette.count {
            var other: [Int: Int64] = [:]
            for rest in series[palette.count...] { for (day, count) in rest.counts { other[day, default: 0] += count } }
            series = Array(series.prefix(palette.count)) + [Series(label: otherLabel, counts: other)]
        }
        let colors = series.indices.map { $0 < palette.count ? palette[$0] : otherColor }
        let totals = days.map { day in series.reduce(Int64(0)) { $0 + ($1.counts[day] ?? 0) } }
        let grandTotal = totals.reduce(0, +)
        let scale = Double(niceCeiling(max(totals.max() ?? 0, 1)))
        let slot = plotWidth / Double(max(days.count, 1)), barWidth = max(1, slot * 0.72)

        var bars: [Bar] = []
        for (index, day) in days.enumerated() {
            var stacked: Int64 = 0
            for (position, item) in series.enumerated() {
                guard let count = item.counts[day], count > 0 else { continue }
                let y0 = Double(top) + plotHeight * (1 - Double(stacked + count) / scale)
                let barHeight = plotHeight * Double(count) / scale
                stacked += count
                bars.append(Bar(x: f(Double(left) + Double(index) * slot + (slot - barWidth) / 2), y: f(y0), width: f(barWidth),
                                height: f(max(barHeight, 0.5)), color: colors[position],
                                title: "\(display(day)): \(item.label), \(count) \(unit)"))
            }
        }
        let tickValues = scale >= 2 && Int64(scale) % 2 == 0 ? [0, Int64(scale) / 2, Int64(scale)] : [0, Int64(scale)]
        let ticks = tickValues.map { value in
            let y = Double(top) + plotHeight * (1 - Double(value) / scale)
            return Tick(y: f(y), textY: f(y + 4), label: "\(value)")
        }
        let step = max(1, Int((Double(days.count) / 7).rounded(.up)))
        // Counted back from the last day, so today (the right end) is always labelled.
        let labels = stride(from: days.count - 1, through: 0, by: -step).reversed().map { index in
            // The last label ends at the plot's right edge instead of running past it.
            index == days.count - 1
                ? Label(x: "\(width - right)", text: display(days[index]), anchor: "end")
                : Label(x: f(Double(left) + (Double(index) + 0.5) * slot), text: display(days[index]), anchor: "middle")
        }
        let busiest = zip(days, totals).max { $0.1 < $1.1 }
        let range = days.isEmpty ? "" : "\(display(days[0])) to \(display(days[days.count - 1]))"
        let summary = grandTotal == 0 ? emptyText
            : "\(grandTotal) \(unit) from \(range); the busiest \(slotName) was \(busiest.map { display($0.0) } ?? "") with \(busiest?.1 ?? 0)."
        let legend: [Legend] = zip(series, colors).map { item, color in Legend(label: item.label, color: color, total: "\(total(item))") }
        let columns: [String] = series.map { $0.label }
        let rows: [Row] = zip(days, totals).filter { $0.1 > 0 }.reversed().map { (day: Int, dayTotal: Int64) -> Row in
            Row(day: slotsByID[day]?.text ?? "", values: series.map { "\($0.counts[day] ?? 0)" }, total: "\(dayTotal)")
        }
        return BarChart(
            id: id, heading: heading, title: "\(heading), \(range)", summary: summary, isEmpty: grandTotal == 0, emptyText: emptyText,
            emptyNote: emptyNote, slotHeading: slotHeading,
            width: width, height: height, left: left, right: width - right, baseline: f(Double(top) + plotHeight), tickX: left - 8,
            labelY: height - 10, centerX: left + Int(plotWidth / 2), centerY: top + Int(plotHeight / 2), bars: bars, ticks: ticks, labels: labels,
            legend: legend, columns: columns, rows: rows)
    }

    /// 1, 2, 5, 10, 20, 50, … at or above `value`.
    static func niceCeiling(_ value: Int64) -> Int64 {
        var magnitude: Int64 = 1
        while true {
            for factor: Int64 in [1, 2, 5] where factor * magnitude >= value { return factor * magnitude }
            magnitude *= 10
        }
    }

    /// `Nov 22`.
    static func display(_ day: UsageDay) -> String {
        let parts = day.text.split(separator: "-")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 3, let month = Int(parts[1]), let date = Int(parts[2]) else { return day.text }
        return "\(months[month - 1]) \(date)"
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }
}
