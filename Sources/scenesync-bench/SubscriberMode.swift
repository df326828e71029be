/// How a subscriber maps a `change` event to the time its change was made.
enum SubscriberMode: Sendable {
    /// A `set` loop on one scene: the n-th `set` gets revision `base + n`, so the key is the revision offset.
    case revisions(base: UInt64)
    /// Scene files written round-robin, sequence `s` to file `(s - 1) % files`, the content holding
    /// `{"s":s,"f":file}`: the key is `s`, and a skipped sequence of the same file is a coalesced write.
    case fileSequences(files: Int)
}
