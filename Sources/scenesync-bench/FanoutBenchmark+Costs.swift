/// What a paced run costs the daemon beside what the same run costs Redis, plus the write floor (``WriteFloor``):
/// Redis writes no file, and the floor is the least a file write at that rate costs anyone.
extension FanoutBenchmark {
    func costComparisons(
        _ daemon: FanoutResult, _ redis: FanoutResult, rate: Int, duration: Double, table: ResultTable
    ) throws(BenchError) -> [Comparison] {
        let floor = try WriteFloor.measure(content: Array(ChangeDriver.path(1).utf8), rate: rate, duration: duration)
        table.note("write floor at \(rate)/s: \(fixed(floor, 1)) µs CPU per write")
        let subscribers = daemon.subscribers
        let run = "paced \(subscribers)×\(rate)/s"
        let daemonPerChange = daemon.perChange(daemon.costs.daemonCPU * 1e6)
        let redisPerChange = redis.perChange(redis.costs.daemonCPU * 1e6)
        let perDelivery = { (result: FanoutResult) -> Double in
            let delivered = Double(result.deliveries.totals.delivered)
            return delivered > 0 ? result.costs.daemonCPU * 1e6 / delivered : 0
        }
        guard subscribers == 1 else {
            return [
                Comparison(
                    figure: "\(run) CPU µs/delivery", scenesync: perDelivery(daemon),
                    peer: "redis+floor/\(subscribers)",
                    peerValue: perDelivery(redis) + floor / Double(subscribers), goal: .ratioAtMost(1.5), decimals: 2)
            ]
        }
        return [
            Comparison(
                figure: "\(run) CPU µs/change", scenesync: daemonPerChange, peer: "redis+floor",
                peerValue: redisPerChange + floor, goal: .ratioAtMost(1.5), decimals: 1),
            Comparison(
                figure: "\(run) ctx switches/change", scenesync: daemon.perChange(Double(daemon.costs.daemonSwitches)),
                peer: "redis", peerValue: redis.perChange(Double(redis.costs.daemonSwitches)), goal: .atMost(3),
                decimals: 2),
        ]
    }
}
