import Testing

/// Hosts killed (`SIGKILL`) at the worst moments of replication (§9): what the journal, the snapshot and the scene
/// files then hold must still reach every host once. A suite of its own beside ``ClusterReplicationTests``, each
/// serialized, so that the two run side by side.
@Suite(.serialized, TestEnvironment.postgres)
struct ClusterKillTests {}
