import Testing

@testable import SceneSyncCore

@Suite("RFC3339")
struct RFC3339Tests {
    @Test(
        "known instants",
        arguments: [
            (0, 0, "1970-01-01T00:00:00.000Z"), (951_782_400, 0, "2000-02-29T00:00:00.000Z"),
            (951_868_799, 999_999_999, "2000-02-29T23:59:59.999Z"), (951_868_800, 0, "2000-03-01T00:00:00.000Z"),
            (1_795_250_795, 123_456_789, "2026-11-21T08:46:35.123Z"), (2_147_483_648, 0, "2038-01-19T03:14:08.000Z"),
            (4_107_585_600, 1_000_000, "2100-03-01T12:00:00.001Z"), (253_402_300_799, 0, "9999-12-31T23:59:59.000Z"),
            (-1, 0, "1969-12-31T23:59:59.000Z"), (-86_400, 0, "1969-12-31T00:00:00.000Z"),
            (-86_401, 0, "1969-12-30T23:59:59.000Z"), (-2_208_988_800, 0, "1900-01-01T00:00:00.000Z"),
        ] as [(Int64, Int64, String)])
    func instants(_ seconds: Int64, _ nanoseconds: Int64, _ expected: String) {
        #expect(RFC3339.format(secondsSinceEpoch: seconds, nanoseconds: nanoseconds) == expected)
    }

    @Test("every day of a leap and a common year is formatted consecutively")
    func consecutiveDays() {
        // 1999-12-31 through 2001-01-01.
        var previous = RFC3339.format(secondsSinceEpoch: 946_598_400)
        #expect(previous == "1999-12-31T00:00:00.000Z")
        var days = 0
        for day in 1...367 as ClosedRange<Int64> {
            let current = RFC3339.format(secondsSinceEpoch: 946_598_400 + day * 86_400)
            #expect(current > previous)
            #expect(current.hasSuffix("T00:00:00.000Z"))
            previous = current
            days += 1
        }
        #expect(previous == "2001-01-01T00:00:00.000Z")
        #expect(days == 367)
    }
}
