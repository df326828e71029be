/// The daemon's consolidated view: a position in the global order of changes.
public struct Clock: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Changes whenever the daemon cannot prove continuity with its previous run; clocks of different epochs are
    /// incomparable.
    public var epoch: String
    /// Global counter of accepted changes.
    public var revision: UInt64

    public init(epoch: String, revision: UInt64) {
        self.epoch = epoch
        self.revision = revision
    }

    public var description: String { "\(epoch):\(revision)" }

    /// Parses the CLI's `EPOCH:REVISION` form. The epoch may itself contain `:`; the revision is after the last.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let revision = UInt64(text[text.index(after: colon)...]) else {
            return nil
        }
        self.init(epoch: String(text[..<colon]), revision: revision)
    }
}

/// Where a change came from.
public struct Origin: Sendable, Equatable, Hashable {
    public enum Source: String, Sendable {
        case file
        case client
        /// Another host's change, received through the cluster database (§9).
        case remote
    }

    public var source: Source
    /// The name the client gave in `hello`.
    public var client: String?
    public var uid: UInt32?
    public var pid: Int32?
    /// The `cluster.host` of the host a `remote` change came from.
    public var host: String?

    public init(
        source: Source, client: String? = nil, uid: UInt32? = nil, pid: Int32? = nil, host: String? = nil
    ) {
        self.source = source
        self.client = client
        self.uid = uid
        self.pid = pid
        self.host = host
    }

    public static let file = Origin(source: .file)
}

/// One scene as the daemon knows it.
public struct SceneState: Sendable, Equatable {
    public var id: SceneID
    /// 1 on creation, +1 per change.
    public var version: UInt64
    /// The revisions that created and last changed it.
    public var created: UInt64
    public var modified: UInt64
    public var format: SceneFormat
    /// The last phase an app reported for this scene (the `phase` op), `nil` if none was since it was created.
    /// Reporting one is not a change (no revision, no version): it only tells the next launch whether the window
    /// was closed cleanly (`background`) or was still showing when its process stopped. Declared next to `format`
    /// so that it takes the padding after it, and a store of many scenes grows by nothing.
    public var phase: ScenePhase?
    /// The path's elements, packed in one buffer (see ``ElementStorage``).
    var elements: ElementStorage
    /// The exact file bytes when they differ from the canonical encoding of `path` (see
    /// ``SceneFileCodec/Decoded/layout``).
    public var layout: [UInt8]?

    public init(
        id: SceneID, version: UInt64, created: UInt64, modified: UInt64, format: SceneFormat, path: [Element],
        layout: [UInt8]? = nil, phase: ScenePhase? = nil
    ) {
        self.init(
            id: id, version: version, created: created, modified: modified, format: format,
            elements: ElementStorage.pack(path), layout: layout, phase: phase)
    }

    /// A state whose elements are packed already (a decoded file's).
    init(
        id: SceneID, version: UInt64, created: UInt64, modified: UInt64, format: SceneFormat,
        elements: ElementStorage, layout: [UInt8]?, phase: ScenePhase? = nil
    ) {
        self.id = id
        self.version = version
        self.created = created
        self.modified = modified
        self.format = format
        self.phase = phase
        self.elements = elements
        self.layout = layout
    }

    /// Root first. Built from the packed elements on each access; setting it packs them again.
    public var path: [Element] {
        get { elements.elements }
        set { elements = ElementStorage.pack(newValue) }
    }

    /// What the scene file holds (or should hold) for this state.
    public var fileBytes: [UInt8] {
        if let layout { return layout }
        var out: [UInt8] = []
        // An estimate, not a count: counting would walk the elements twice, on the path of every change.
        out.reserveCapacity(elements.retainedBytes + 2 + 8 * depth)
        elements.appendFile(as: format, to: &out)
        return out
    }

    /// ``fileBytes`` appended to `out`, with no array of elements and no buffer of its own in between.
    public func appendFileBytes(to out: inout [UInt8]) {
        if let layout { return out.append(contentsOf: layout) }
        elements.appendFile(as: format, to: &out)
    }

    /// How many bytes ``fileBytes`` has, counted without building them.
    public var fileByteCount: Int { layout?.count ?? elements.fileByteCount(as: format) }

    public var depth: Int { elements.header.count }

    /// Bytes of content this scene retains (its elements, its layout, its ID), for the memory figures of the
    /// benchmark.
    public var retainedBytes: Int {
        elements.retainedBytes + (layout?.count ?? 0) + id.rawValue.utf8.count
    }

    public static func == (lhs: SceneState, rhs: SceneState) -> Bool {
        lhs.id == rhs.id && lhs.version == rhs.version && lhs.created == rhs.created && lhs.modified == rhs.modified
            && lhs.format == rhs.format && lhs.phase == rhs.phase && lhs.layout == rhs.layout
            && lhs.elements.hasSameElements(as: rhs.elements)
    }
}

/// The state a change overwrote without having seen it: a client's write over an app's unread file change, or an
/// app's file write over a client's change it was not based on.
public struct Conflict: Sendable, Equatable {
    public var path: [Element]
    public var origin: Origin

    public init(path: [Element], origin: Origin) {
        self.path = path
        self.origin = origin
    }
}

/// One accepted change: the content of a `change` event and of a `history` record.
///
/// History keeps ten thousand of these by default, so a record is small: its path is the packed elements of the
/// scene's state of that version (shared with it, not copied), and an origin other than the file or a conflict,
/// which few records have, is kept out of line.
public struct ChangeRecord: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case set
        case delete
    }

    public var clock: Clock
    public var scene: SceneID
    /// The scene's version after the change; for a delete, the version it had.
    public var version: UInt64
    /// The path's elements; absent for deletes.
    var elements: ElementStorage?
    private(set) var details: Details?
    public var kind: Kind
    public var format: SceneFormat

    /// What few records have, in one allocation shared by the copies of a record (and by the store's entry of
    /// the scene, which keeps who made its state).
    final class Details: Sendable {
        let origin: Origin
        let conflict: Conflict?

        init(origin: Origin, conflict: Conflict?) {
            self.origin = origin
            self.conflict = conflict
        }

        /// `nil` for the file's own change without a conflict, the common case.
        static func make(origin: Origin, conflict: Conflict?) -> Details? {
            origin == .file && conflict == nil ? nil : Details(origin: origin, conflict: conflict)
        }
    }

    public init(
        clock: Clock, scene: SceneID, kind: Kind, version: UInt64, format: SceneFormat, path: [Element]?,
        origin: Origin, conflict: Conflict? = nil
    ) {
        self.init(
            clock: clock, scene: scene, kind: kind, version: version, format: format,
            elements: path.map(ElementStorage.pack), origin: origin, conflict: conflict)
    }

    init(
        clock: Clock, scene: SceneID, kind: Kind, version: UInt64, format: SceneFormat, elements: ElementStorage?,
        origin: Origin, conflict: Conflict?
    ) {
        self.clock = clock
        self.scene = scene
        self.version = version
        self.elements = elements
        self.details = Details.make(origin: origin, conflict: conflict)
        self.kind = kind
        self.format = format
    }

    /// Absent for deletes.
    public var path: [Element]? {
        get { elements?.elements }
        set { elements = newValue.map(ElementStorage.pack) }
    }

    public var origin: Origin {
        get { details?.origin ?? .file }
        set { details = Details.make(origin: newValue, conflict: conflict) }
    }

    public var conflict: Conflict? {
        get { details?.conflict }
        set { details = Details.make(origin: origin, conflict: newValue) }
    }

    public static func == (lhs: ChangeRecord, rhs: ChangeRecord) -> Bool {
        guard lhs.clock == rhs.clock, lhs.scene == rhs.scene, lhs.version == rhs.version, lhs.kind == rhs.kind,
            lhs.format == rhs.format, lhs.origin == rhs.origin, lhs.conflict == rhs.conflict
        else { return false }
        switch (lhs.elements, rhs.elements) {
        case (nil, nil): return true
        case (let left?, let right?): return left.hasSameElements(as: right)
        default: return false
        }
    }
}
