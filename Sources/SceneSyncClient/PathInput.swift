public import SceneSyncCore

/// Turns paths typed by people (command-line arguments, files piped in) into elements, with errors that say what is
/// wrong before anything reaches the daemon.
///
/// `scenesync set` and `push` use it; it lives in the library so that other tools accept the same inputs.
public enum PathInput {
    /// A scene file's content, understood.
    public struct SceneFile: Sendable, Equatable {
        /// Root first.
        public var path: [Element]
        /// `codable` or `array` as detected; `nil` for `[]`, which leaves the scene's format as it is.
        public var format: SceneFormat?
    }

    /// Why an input was refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not valid JSON.
        case notJSON(String)
        /// Valid JSON, but a path must be a JSON array.
        case notAnArray
        /// A wire path whose elements are not `{"type"?, "value"}` objects.
        case invalidWirePath(String)
        /// A value argument (1-based) that is not a JSON text.
        case invalidValue(position: Int, String)

        /// What is wrong, for error messages.
        public var description: String {
            switch self {
            case .notJSON(let why): "not valid JSON: \(why)"
            case .notAnArray: "not a JSON array"
            case .invalidWirePath(let why): "not a wire path: \(why)"
            case .invalidValue(let position, let why): "value \(position) is not valid JSON: \(why)"
            }
        }
    }

    /// A scene file's content in either format: `NavigationPath.CodableRepresentation` (`[tag, item, …]`, top
    /// first) or a plain array (root first), told apart by the daemon's own `auto` rule. Size limits are the
    /// daemon's to apply, not this parser's.
    public static func sceneFile(_ bytes: [UInt8]) throws(Failure) -> SceneFile {
        let codec = SceneFileCodec(policy: .auto, maxFileBytes: .max, maxDepth: .max)
        do throws(SceneFileError) {
            let decoded = try codec.decode(bytes)
            return SceneFile(path: decoded.path, format: decoded.format)
        } catch {
            switch error {
            case .notAnArray: throw .notAnArray
            case .invalidJSON(let why): throw .notJSON(why.description)
            default: throw .notJSON(error.description)
            }
        }
    }

    /// A wire path: `[{"type": …, "value": …}, …]` or `[{"value": …}, …]`, root first.
    public static func wirePath(_ bytes: [UInt8]) throws(Failure) -> [Element] {
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONParser.parse(bytes)
        } catch {
            throw .notJSON(error.description)
        }
        guard json.arrayValue != nil else { throw .notAnArray }
        do throws(SceneSyncError) {
            return try Wire.decodePath(json)
        } catch {
            throw .invalidWirePath(error.message)
        }
    }

    /// Values given one per argument, each a JSON text (`42`, `'"text"'`, `'{"applePie":{}}'`), all with `type` as
    /// their tag when given (a codable scene's elements) or none (an array scene's).
    public static func values(_ texts: [String], type: String?) throws(Failure) -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(texts.count)
        for (offset, text) in texts.enumerated() {
            do throws(JSONError) {
                elements.append(try Element(tag: type, json: Array(text.utf8)))
            } catch {
                throw .invalidValue(position: offset + 1, error.description)
            }
        }
        return elements
    }
}
