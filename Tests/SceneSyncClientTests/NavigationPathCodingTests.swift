import SceneSyncClient
import SceneSyncCore
import Testing

/// The bridge between wire paths and SwiftUI's `NavigationPath.CodableRepresentation`.
@Suite struct NavigationPathCodingTests {
    /// SwiftUI's documentation example: the path `[applePie, 42]`, top first in the representation.
    let representation = #"["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#
    let wire = #"[{"type":"MyApp.Recipe","value":{"applePie":{}}},{"type":"Swift.Int","value":42}]"#

    @Test func representationToWireAndBack() throws {
        let path = try NavigationPathCoding.path(fromCodableRepresentation: Array(representation.utf8))
        #expect(path.map(\.tag) == ["MyApp.Recipe", "Swift.Int"])
        #expect(String(decoding: NavigationPathCoding.wireJSON(of: path), as: UTF8.self) == wire)
        let back = try NavigationPathCoding.codableRepresentation(
            of: try NavigationPathCoding.path(fromWireJSON: Array(wire.utf8)))
        #expect(String(decoding: back, as: UTF8.self) == representation)
        #expect(
            String(
                decoding: try NavigationPathCoding.codableRepresentation(fromWireJSON: Array(wire.utf8)), as: UTF8.self)
                == representation)
    }

    @Test func itemsKeepTheirBytes() throws {
        let odd = #"["MyApp.Note","{\"text\":\"caf\\u00e9\",\"n\":1.50}"]"#
        let path = try NavigationPathCoding.path(fromCodableRepresentation: Array(odd.utf8))
        #expect(String(decoding: try NavigationPathCoding.codableRepresentation(of: path), as: UTF8.self) == odd)
    }

    @Test func emptyPath() throws {
        #expect(try NavigationPathCoding.path(fromCodableRepresentation: Array("[]".utf8)).isEmpty)
        #expect(try NavigationPathCoding.codableRepresentation(of: []) == Array("[]".utf8))
    }

    @Test func arrayElementsHaveNoRepresentation() throws {
        let path = try NavigationPathCoding.path(fromWireJSON: Array(#"[{"value":1}]"#.utf8))
        #expect(throws: NavigationPathCoding.Failure.untypedElement(index: 0)) {
            try NavigationPathCoding.codableRepresentation(of: path)
        }
    }

    @Test func invalidInputs() throws {
        #expect(throws: NavigationPathCoding.Failure.self) {
            try NavigationPathCoding.path(fromCodableRepresentation: Array(#"["Swift.Int"]"#.utf8))
        }
        #expect(throws: NavigationPathCoding.Failure.self) {
            try NavigationPathCoding.path(fromCodableRepresentation: Array(#"["Swift.Int","not json"]"#.utf8))
        }
        #expect(throws: NavigationPathCoding.Failure.self) {
            try NavigationPathCoding.path(fromWireJSON: Array(#"[1]"#.utf8))
        }
        #expect(throws: NavigationPathCoding.Failure.self) {
            try NavigationPathCoding.path(fromWireJSON: Array(#"{"#.utf8))
        }
    }
}
