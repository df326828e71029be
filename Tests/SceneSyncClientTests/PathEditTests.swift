import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// `PathEdit`, the write a UI binding makes: the edit from the path it was based on to the value it set, applied on
/// top of another writer's newer path. Checked exhaustively over every small base, target and newer path, so that
/// what the contract promises (§10: another writer's acknowledged pushes are never lost, an edit that no longer
/// applies is dropped) holds for every case, not only the ones someone thought of.
@Suite struct PathEditTests {
    /// One element of the small alphabet: the route it stands for (its name), its value (equal values are equal
    /// elements) and the element, with its own bytes.
    struct Letter {
        var name: String
        var value: String
        var element: Element
    }

    /// `a1` and `a2` are equal as JSON but differ in bytes; `b` is a value of another shape.
    static let alphabet: [Letter] = [
        Letter(name: "a1", value: "a", element: element("T.Route", #"{"a":1,"b":2}"#)),
        Letter(name: "a2", value: "a", element: element("T.Route", #"{"b":2,"a":1}"#)),
        Letter(name: "b", value: "b", element: element("T.Route", "[1]")),
    ]

    /// An element with exactly these item bytes (`Element(tag:value:)` would respell them).
    static func element(_ tag: String, _ json: String) -> Element {
        do {
            return try Element(tag: tag, json: Array(json.utf8))
        } catch {
            Issue.record("not JSON in the test itself: \(json)")
            return Element(tag: tag, value: .null)
        }
    }

    /// Every path of at most `length` letters of `letters`.
    static func paths(upTo length: Int, of letters: [Letter] = alphabet) -> [[Letter]] {
        var all: [[Letter]] = [[]]
        var last: [[Letter]] = [[]]
        for _ in 0..<length {
            last = last.flatMap { path in letters.map { path + [$0] } }
            all += last
        }
        return all
    }

    static func elements(_ path: [Letter]) -> [Element] { path.map(\.element) }
    static func names(_ path: [Letter]) -> [String] { path.map(\.name) }
    static func values(_ path: some Sequence<Letter>) -> [String] { path.map(\.value) }
    static func describe(_ path: [Letter]) -> String { "[" + names(path).joined(separator: ",") + "]" }

    /// The letter whose element has exactly these bytes: which element of the alphabet a result holds.
    static func letter(item: [UInt8]) -> Letter? { letters[item] }
    static let letters: [[UInt8]: Letter] = Dictionary(uniqueKeysWithValues: alphabet.map { ($0.element.item, $0) })
    /// The letter a route (a name) stands for.
    static func letter(named name: String) -> Letter? { alphabet.first { $0.name == name } }

    /// Whether `part` appears in `whole` in order (not necessarily next to each other).
    static func isSubsequence(_ part: [String], of whole: [String]) -> Bool {
        var rest = whole[...]
        for name in part {
            guard let found = rest.firstIndex(of: name) else { return false }
            rest = rest[(found + 1)...]
        }
        return true
    }

    @Test func theEditKeepsTheCommonBottomComparedAsJSON() {
        let a1 = Self.element("T.Route", #"{"a":1,"b":2}"#)
        let a2 = Self.element("T.Route", #"{"b":2,"a":1}"#)
        let b = Self.element("T.Route", "[1]")
        let c = Self.element("U.Route", "[1]")
        #expect(a1 == a2 && a1.item != a2.item && b != c, "the alphabet does not test what it should")

        // The same route encoded with another key order is the same route: nothing popped, one pushed.
        let push = PathEdit(from: [a1], to: [a2, b], routes: ["a2", "b"])
        #expect(push.kept.map(\.item) == [a1.item], "the kept part must be the base's own elements")
        #expect(push.popped.isEmpty && push.pushed == [b] && push.pushedRoutes == ["b"])
        #expect(PathEdit(from: [a1, b], to: [a2, b], routes: ["a2", "b"]).isEmpty)

        // Another tag is another element, even with the same value.
        let replace = PathEdit(from: [a1, b], to: [a1, c], routes: ["a1", "c"])
        #expect(replace.kept == [a1] && replace.popped == [b] && replace.pushed == [c] && replace.pushedRoutes == ["c"])
        let popToRoot = PathEdit(from: [a1, b], to: [], routes: [String]())
        #expect(popToRoot.kept.isEmpty && popToRoot.popped == [a1, b] && popToRoot.pushed.isEmpty)
    }

    /// For every base, target and newer path of at most 3 elements: when the edit applies, the result is the target
    /// on an unchanged base, keeps every element of the newer path that the edit did not pop (in order, with the
    /// newer path's own bytes) and ends with what the edit pushed; it does not apply exactly when what it kept is
    /// gone, or when it pops and the newer path holds more above the kept part than a part of what it popped.
    ///
    /// The expectations are worked out here on the letters (values for equality, names for bytes), independently
    /// of `Element`'s equality, which only the edit itself uses. The base and the newer path come from the daemon,
    /// in any spelling; the target is the app's own encoding, one spelling per value (sorted keys).
    @Test func anAppliedEditNeverLosesAnotherWritersPushes() {
        let paths = Self.paths(upTo: 3)
        let targets = Self.paths(upTo: 3, of: Self.alphabet.filter { $0.name != "a2" })
        var applied = 0
        var refused = 0
        var failures = 0
        func fail(_ message: String) {
            failures += 1
            if failures <= 10 { Issue.record(Comment(rawValue: message)) }
        }
        for base in paths {
            for target in targets {
                let edit = PathEdit(
                    from: Self.elements(base), to: Self.elements(target), routes: Self.names(target))
                // The contract's edit: the longest common bottom (by value) is kept.
                var common = 0
                while common < base.count, common < target.count, base[common].value == target[common].value {
                    common += 1
                }
                let popped = Self.values(base[common...])
                let pushed = Array(target[common...])
                for newer in paths {
                    let result = edit.apply(to: Self.elements(newer), routes: Self.names(newer))
                    let keptIsBottom =
                        newer.count >= common && Self.values(newer.prefix(common)) == Self.values(base.prefix(common))
                    let above = Self.values(newer.dropFirst(common))
                    let aboveIsPartOfPopped = above.count <= popped.count && above == Array(popped.prefix(above.count))
                    let shouldApply = keptIsBottom && (popped.isEmpty || aboveIsPartOfPopped)
                    let context =
                        "base \(Self.describe(base)) target \(Self.describe(target)) newer \(Self.describe(newer))"
                    guard let result else {
                        refused += 1
                        if shouldApply { fail("refused though it applies: \(context)") }
                        continue
                    }
                    applied += 1
                    let letters = result.elements.map { Self.letter(item: $0.item) }
                    let names = letters.map { $0?.name ?? "?" }
                    let values = letters.map { $0?.value ?? "?" }
                    var problems: [String] = []
                    if !shouldApply { problems.append("applied though it should be dropped") }
                    if Self.values(newer) == Self.values(base), values != Self.values(target) {
                        problems.append("on an unchanged base the result is not the target")
                    }
                    // What the edit popped, where it sits in the newer path: above the kept part, when what is there
                    // is part of what was popped; everything else of the newer path is another writer's and stays,
                    // with its own bytes.
                    let poppedHere = !popped.isEmpty && keptIsBottom && aboveIsPartOfPopped ? above.count : 0
                    let survivors = Array(newer.dropLast(poppedHere))
                    if !Self.isSubsequence(Self.names(survivors), of: names) {
                        problems.append("lost an element of the newer path (or its bytes)")
                    }
                    if !names.starts(with: Self.names(survivors)) {
                        problems.append("the newer path's elements are not the result's bottom")
                    }
                    if !names.reversed().starts(with: Self.names(pushed).reversed()) {
                        problems.append("the result does not end with the pushed elements")
                    }
                    if names.count != survivors.count + pushed.count {
                        problems.append("the result holds more than the newer path and the pushed elements")
                    }
                    // The routes go with the elements: the newer path's below, the binding's on top.
                    if result.routes != names { problems.append("routes \(result.routes) do not match the elements") }
                    if !problems.isEmpty {
                        fail("\(context) → \(names): \(problems.joined(separator: "; "))")
                    }
                }
            }
        }
        #expect(failures == 0, "\(failures) cases failed")
        // Both outcomes were exercised, many times each.
        #expect(applied > 5_000 && refused > 5_000, "applied \(applied), refused \(refused)")
    }
}
