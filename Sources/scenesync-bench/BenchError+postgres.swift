import SceneSyncTestKit

extension BenchError {
    /// Runs a step of the cluster scenario's private PostgreSQL (the integration tests' own, from
    /// SceneSyncTestKit), its failure as the bench's.
    @discardableResult
    static func postgres<T>(_ body: () throws(PrivatePostgresError) -> T) throws(BenchError) -> T {
        do {
            return try body()
        } catch {
            throw BenchError(error.description)
        }
    }
}
