/// What the subscribers of a run received and how long it took them, from the first change sent to the last one
/// received: the time includes the drain after the writer stopped, so a backlog does not pass for throughput.
struct Deliveries {
    var totals: SubscriberTotals
    var seconds: Double

    init(_ totals: SubscriberTotals, since firstSend: Int64) {
        self.totals = totals
        seconds = Monotonic.seconds(totals.lastReceipt - firstSend)
    }

    var perSecond: Double { Double(totals.delivered) / seconds }
}
