public import SceneSyncCore

/// Converts between the daemon's wire paths and the JSON of SwiftUI's `NavigationPath.CodableRepresentation`.
///
/// An app keeps its navigation state in a `NavigationPath` and persists it through `path.codable` and
/// `JSONEncoder`/`JSONDecoder` (as in SwiftUI's documentation). The daemon speaks root-first wire paths
/// (`[{"type": …, "value": …}]`). These helpers bridge the two without the app decoding any element itself: the
/// bytes an app gets from ``codableRepresentation(of:)`` go straight into
/// `JSONDecoder().decode(NavigationPath.CodableRepresentation.self, from: Data(bytes))`, and the bytes it encodes
/// go straight into ``path(fromCodableRepresentation:)``. Items are kept byte for byte (the scene file codec's
/// rule), so what SwiftUI wrote is what SwiftUI reads back.
public enum NavigationPathCoding {
    /// Why a path could not be converted.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// `NavigationPath.CodableRepresentation` needs a type name for every element; this one has none (it comes
        /// from an `array` scene).
        case untypedElement(index: Int)
        /// The bytes are not a codable representation (`[tag, item, …]` with every item a JSON text).
        case invalidRepresentation(SceneFileError)
        /// The bytes are not a wire path.
        case invalidWirePath(String)

        /// What is wrong, for error messages.
        public var description: String {
            switch self {
            case .untypedElement(let index): "element \(index) has no type name, so it cannot be a NavigationPath item"
            case .invalidRepresentation(let error): "not a NavigationPath.CodableRepresentation: \(error)"
            case .invalidWirePath(let message): "not a wire path: \(message)"
            }
        }
    }

    /// No size limits here: those are the daemon's to enforce.
    private static let codec = SceneFileCodec(policy: .codable, maxFileBytes: .max, maxDepth: .max)

    /// The `NavigationPath.CodableRepresentation` JSON of a root-first path: `[tag, item, …]`, top of the stack
    /// first, each item a JSON text in a string.
    public static func codableRepresentation(of path: [Element]) throws(Failure) -> [UInt8] {
        if let index = path.firstIndex(where: { $0.tag == nil }) { throw .untypedElement(index: index) }
        return SceneFileCodec.encode(path, as: .codable)
    }

    /// The root-first path held by `NavigationPath.CodableRepresentation` JSON.
    public static func path(fromCodableRepresentation json: [UInt8]) throws(Failure) -> [Element] {
        do throws(SceneFileError) {
            return try codec.decode(json).path
        } catch {
            throw .invalidRepresentation(error)
        }
    }

    /// A path as the wire shows it: `[{"type":…,"value":…},…]`, root first.
    public static func wireJSON(of path: [Element]) -> [UInt8] {
        var out: [UInt8] = []
        Wire.appendPath(path, to: &out)
        return out
    }

    /// The path of wire JSON (what `get` and `change` carry as `path`, or `scenesync set --wire` takes).
    public static func path(fromWireJSON json: [UInt8]) throws(Failure) -> [Element] {
        do {
            return try Wire.decodePath(try JSONParser.parse(json))
        } catch let error as JSONError {
            throw .invalidWirePath("\(error)")
        } catch let error as SceneSyncError {
            throw .invalidWirePath(error.message)
        } catch {
            throw .invalidWirePath("\(error)")
        }
    }

    /// Shortcut for the common case: wire JSON straight to `NavigationPath.CodableRepresentation` JSON.
    public static func codableRepresentation(fromWireJSON json: [UInt8]) throws(Failure) -> [UInt8] {
        try codableRepresentation(of: try path(fromWireJSON: json))
    }
}
