@testable import CofferServer
import Foundation
import Testing
import Vapor

/// The activity charts as the dashboard renders them: labels from user data escaped inside the
/// SVG, a title and summary for screen readers, and an empty state.
@Suite("Dashboard charts")
struct BarChartTests {
    struct Context: Encodable { let chart: BarChart }

    static func render(_ chart: BarChart, on server: TestServer) async throws -> String {
        let view = try await server.app.view.render("chart", Context(chart: chart)).get()
        return String(buffer: view.data)
    }

    @Test("a label with markup is text in the SVG's legend, tooltips and table; the chart has a title and a summary")
    func escaping() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let today = UsageDay()
        let days = Array(today.advanced(by: -6)...today)
        let chart = BarChart.stacked(id: "downloads", heading: "Downloads", unit: "downloads", days: days,
                                     series: [.init(label: "<script>alert(\"x\")</script> & co", counts: [today: 3, today.advanced(by: -1): 1])],
                                     otherLabel: "Other", emptyText: "Nothing.")
        let html = try await Self.render(chart, on: server)
        #expect(!html.contains("<script>"))
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co"))
        #expect(html.contains("role=\"img\" aria-labelledby=\"downloads-title downloads-desc\""))
        #expect(html.contains("<desc id=\"downloads-desc\">4 downloads from"))
        #expect(html.components(separatedBy: "<rect x=").count - 1 == 2, "one bar per day with counts")
        #expect(html.contains(BarChart.display(today)), "the last day is labelled")
    }

    @Test("no counts: the SVG says so and the page says what makes counts appear")
    func empty() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let chart = BarChart.stacked(id: "deliveries", heading: "Key deliveries", unit: "key deliveries", days: [UsageDay()],
                                     series: [], otherLabel: "Other", emptyText: "No keys delivered to devices in these days.")
        #expect(chart.isEmpty)
        let html = try await Self.render(chart, on: server)
        #expect(html.contains("class=\"chart-empty\""))
        #expect(html.contains("<desc id=\"deliveries-desc\">No keys delivered to devices in these days.</desc>"))
        #expect(html.contains("Counts appear here after devices sync"))
        #expect(!html.contains("<rect x="))
    }

    @Test("more than seven versions: the smallest are summed as other versions")
    func other() {
        let today = UsageDay()
        let series = (1...9).map { BarChart.Series(label: "v\($0)", counts: [today: Int64($0)]) }
        let chart = BarChart.stacked(id: "d", heading: "D", unit: "downloads", days: [today], series: series, otherLabel: "Other versions", emptyText: "")
        #expect(chart.columns == ["v9", "v8", "v7", "v6", "v5", "v4", "v3", "Other versions"])
        #expect(chart.legend.last?.total == "3")
        #expect(chart.rows.first?.total == "45")
    }
}
