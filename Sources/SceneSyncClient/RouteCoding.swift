import SceneSyncCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How `Route` values become path elements and back, the way SwiftUI's `NavigationPath.CodableRepresentation` does
/// it: in a codable scene each element is tagged with `String(reflecting: Route.self)` (`MyApp.Route`) and
/// holds the `JSONEncoder` encoding of the route; in an array scene the element is the encoding alone.
///
/// Keys are sorted, so that one value always has one encoding: the daemon compares elements as JSON anyway, but a
/// file whose bytes do not change when nothing changed is what people diffing their scene files expect.
///
/// Encoding needs only `Encodable` and decoding only `Decodable`, as ``SceneFile``'s `write` and `read` ask for.
struct RouteCoding<Route>: Sendable {
    /// The tag of every element this type writes, and the only one it reads in a codable scene.
    let tag: String

    init() throws(SceneSyncClientError) {
        let name = String(reflecting: Route.self)
        // A private or local type prints as `MyApp.(unknown context at $10a2b3c4).Route`: the address changes from
        // one build to the next, so files written by one build would not decode in the next.
        guard !name.contains("("), let first = name.first, first.isLetter || first == "_", name.contains(".") else {
            throw SceneSyncClientError(
                .unstableTypeName,
                "\(name) has no stable qualified name (a private or local type): declare the route type at file "
                    + "scope and not private, so that its name can tag the elements")
        }
        tag = name
    }
}

extension RouteCoding where Route: Encodable {
    /// The elements of `routes`, root first: tagged for a codable scene, plain values for an array scene.
    func encode(_ routes: [Route], as format: SceneFormat) throws(SceneSyncClientError) -> [Element] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var elements: [Element] = []
        elements.reserveCapacity(routes.count)
        for (index, route) in routes.enumerated() {
            let bytes: [UInt8]
            do {
                bytes = Array(try encoder.encode(route))
            } catch {
                throw SceneSyncClientError(.unencodableRoute, "route \(index) does not encode: \(error)", index: index)
            }
            do throws(JSONError) {
                elements.append(try Element(tag: format == .array ? nil : tag, json: bytes))
            } catch {
                throw SceneSyncClientError(
                    .unencodableRoute, "route \(index) encodes to something that is not JSON: \(error)", index: index)
            }
        }
        return elements
    }
}

extension RouteCoding where Route: Decodable {
    /// The routes of a path, root first. Every element must be a `Route`: tagged with ``tag`` (codable scene) or
    /// untagged (array scene), and decodable. One that is not is an error, never dropped, since writing the path
    /// back without it would delete another component's entry.
    func decode(_ path: [Element]) throws(SceneSyncClientError) -> [Route] {
        let decoder = JSONDecoder()
        var routes: [Route] = []
        routes.reserveCapacity(path.count)
        for (index, element) in path.enumerated() {
            routes.append(try decode(element, at: index, with: decoder).get())
        }
        return routes
    }

    /// One element as a `Route`; the error names the element's position, its tag and value, and why it does not
    /// decode, which is what an app engineer needs to find the route case that changed.
    func decode(_ element: Element, at index: Int, with decoder: JSONDecoder) -> Result<Route, SceneSyncClientError> {
        let stored = String(decoding: element.item, as: UTF8.self)
        if let elementTag = element.tag, elementTag != tag {
            return .failure(
                SceneSyncClientError(
                    .undecodableElement, "element \(index) (\(elementTag) \(stored)) is a \(elementTag), not a \(tag)",
                    index: index))
        }
        do {
            return .success(try decoder.decode(Route.self, from: Data(element.item)))
        } catch {
            let shown = element.tag.map { "\($0) \(stored)" } ?? stored
            return .failure(
                SceneSyncClientError(
                    .undecodableElement, "element \(index) (\(shown)) does not decode as \(tag): \(error)", index: index
                ))
        }
    }
}
