import SceneSyncCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A scene's path as a ``ScenePath`` takes it in under its ``UndecodableRoutes`` policy.
struct DecodedRoutes<Route: Sendable>: Sendable {
    /// Root first: the whole path, or what the policy keeps of it.
    var routes: [Route] = []
    /// The elements the policy left out, root first.
    var skipped: [SkippedRoute] = []
    /// Under ``UndecodableRoutes/fail``: the first element that does not decode. `routes` then means nothing.
    var failure: SceneSyncClientError?

    static var empty: DecodedRoutes { DecodedRoutes() }

    /// Every element decoded.
    static func success(_ routes: [Route]) -> DecodedRoutes { DecodedRoutes(routes: routes) }

    /// An element did not decode, under ``UndecodableRoutes/fail``.
    static func failure(_ error: SceneSyncClientError) -> DecodedRoutes { DecodedRoutes(failure: error) }
}

extension RouteCoding where Route: Decodable & Sendable {
    /// The routes of a path under `policy`; never throws, since a policy other than ``UndecodableRoutes/fail``
    /// decides what to show instead.
    func decode(_ path: [Element], policy: UndecodableRoutes) -> DecodedRoutes<Route> {
        let decoder = JSONDecoder()
        var decoded = DecodedRoutes<Route>()
        decoded.routes.reserveCapacity(path.count)
        for (index, element) in path.enumerated() {
            switch decode(element, at: index, with: decoder) {
            case .success(let route):
                decoded.routes.append(route)
            case .failure(let error):
                switch policy.kind {
                case .fail:
                    return DecodedRoutes(failure: error)
                case .keepPrefix:
                    decoded.skipped = skip(path, from: index, culprit: error, decoder: decoder)
                case .startAtRoot:
                    decoded.routes = []
                    decoded.skipped = skip(path, from: 0, culprit: error, decoder: decoder)
                }
                return decoded
            }
        }
        return decoded
    }

    /// Every element from `start` to the top, each with its own decoding error, or the culprit's when it decodes
    /// by itself (it is left out only because of the element that did not).
    private func skip(
        _ path: [Element], from start: Int, culprit: SceneSyncClientError, decoder: JSONDecoder
    ) -> [SkippedRoute] {
        let culpritIndex = culprit.index ?? start
        return path.indices.dropFirst(start).map { index in
            let element = path[index]
            let error: SceneSyncClientError
            if index == culpritIndex {
                error = culprit
            } else if case .failure(let own) = decode(element, at: index, with: decoder) {
                error = own
            } else {
                let side = index > culpritIndex ? "below" : "above"
                error = SceneSyncClientError(
                    .undecodableElement,
                    "left out: element \(culpritIndex) \(side) it does not decode (\(culprit.message))",
                    index: culpritIndex)
            }
            return SkippedRoute(
                position: index, tag: element.tag, json: String(decoding: element.item, as: UTF8.self), error: error)
        }
    }
}
