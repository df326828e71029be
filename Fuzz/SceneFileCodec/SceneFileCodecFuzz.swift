@testable import SceneSyncCore

/// libFuzzer harness for ``SceneFileCodec``: any byte string, decoded under each `scenes.format` policy and under
/// tight limits, is either rejected for a reason §3 gives or decoded to the path §3 describes, and writing that path
/// back keeps every element's bytes.
///
/// The expected outcome comes from a small model of §3 built on the plain tree parser (the whole file parsed, then
/// the detection rule applied to the values), so the codec's byte-level scanner is checked against the spec's
/// wording rather than against itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSceneFileCodec(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let model = FileModel(bytes)
    for policy in FormatPolicy.allCases {
        checkCodec(SceneFileCodec(policy: policy), bytes, model, clientSet: true)
    }
    // Tight limits, so that the size and element limits and their interplay with broken files are reached.
    checkCodec(SceneFileCodec(policy: .auto, maxFileBytes: 256, maxDepth: 3), bytes, model, clientSet: false)
    checkCodec(SceneFileCodec(policy: .codable, maxFileBytes: 4096, maxDepth: 2), bytes, model, clientSet: false)
    return 0
}

/// What §3 says about a file, computed from its parsed tree.
struct FileModel {
    /// The whole file is one valid JSON text.
    let isValidJSON: Bool
    /// The top-level array's entries, when the file is a valid array.
    let entries: [JSONValue]?
    /// Where each entry's bytes are in the file.
    let spans: [Range<Int>]

    init(_ bytes: [UInt8]) {
        let value = try? JSONParser.parse(bytes)
        isValidJSON = value != nil
        entries = value?.arrayValue
        spans = entries == nil ? [] : entrySpans(bytes)
    }

    /// Under `auto`: a non-empty, even-length array of strings whose tags look like type names and whose items
    /// parse is codable; any other array is an array path.
    var looksCodable: Bool {
        guard let entries, !entries.isEmpty, entries.count % 2 == 0 else { return false }
        for (index, entry) in entries.enumerated() {
            guard let string = entry.stringValue else { return false }
            if index % 2 == 0 {
                guard looksLikeTypeName(string) else { return false }
            } else {
                guard (try? JSONParser.validate(Array(string.utf8))) != nil else { return false }
            }
        }
        return true
    }

    /// Pinned to codable: why the file is refused, if it is.
    var codableRefusal: SceneFileError? {
        guard let entries else { return nil }
        if entries.count % 2 != 0 { return .oddLength(count: entries.count) }
        if let index = entries.firstIndex(where: { $0.stringValue == nil }) { return .notAString(index: index) }
        return nil
    }
}

/// "Contains a `.` and starts with a letter or `_`", read per Unicode scalar.
func looksLikeTypeName(_ tag: String) -> Bool {
    guard let first = tag.unicodeScalars.first, tag.unicodeScalars.contains(".") else { return false }
    if first == "_" { return true }
    switch first.properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return true
    default: return false
    }
}

func checkCodec(_ codec: SceneFileCodec, _ bytes: [UInt8], _ model: FileModel, clientSet: Bool) {
    let decoded: SceneFileCodec.Decoded
    do throws(SceneFileError) {
        decoded = try codec.decode(bytes)
    } catch {
        checkRejection(error, codec, bytes, model)
        return
    }
    let context = "\(codec.policy) decoding \(show(bytes))"
    require(bytes.count <= codec.maxFileBytes, "accepted a file over max_file_bytes: \(context)")
    require(model.isValidJSON, "accepted invalid JSON: \(context)")
    guard let entries = model.entries else { fatalError("accepted a file that is not an array: \(context)") }
    require(decoded.path.count <= codec.maxDepth, "accepted \(decoded.path.count) elements: \(context)")
    require((decoded.format == nil) == decoded.path.isEmpty, "format \(String(describing: decoded.format)): \(context)")

    // The detected format is the one §3 gives.
    let expected: SceneFormat? =
        entries.isEmpty ? nil : codec.policy.pinned ?? (model.looksCodable ? .codable : .array)
    require(
        decoded.format == expected, "format \(String(describing: decoded.format)), not \(expected as Any): \(context)")

    // The path is the file's content, root first.
    let format = decoded.format ?? .array
    switch format {
    case .array:
        require(decoded.path.count == entries.count, "array path of \(decoded.path.count) elements: \(context)")
        for (index, element) in decoded.path.enumerated() {
            require(element.tag == nil, "array element \(index) has a tag: \(context)")
            require(element.item[...] == bytes[model.spans[index]], "array element \(index) bytes: \(context)")
        }
    case .codable:
        require(decoded.path.count * 2 == entries.count, "codable path of \(decoded.path.count) elements: \(context)")
        for (index, element) in decoded.path.enumerated() {
            let pair = (decoded.path.count - 1 - index) * 2
            require(element.tag == entries[pair].stringValue, "codable element \(index) tag: \(context)")
            let item = entries[pair + 1].stringValue.map { Array($0.utf8) }
            require(element.item == item, "codable element \(index) item: \(context)")
        }
    }

    // The layout is kept exactly when the canonical encoding differs from the file.
    let encoded = SceneFileCodec.encode(decoded.path, as: format)
    require((decoded.layout == nil) == (encoded == bytes), "layout kept wrongly: \(context)")
    require(decoded.layout == nil || decoded.layout == bytes, "layout differs from the file: \(context)")
    require(SceneFileCodec.encodedSize(decoded.path, as: format) == encoded.count, "encodedSize: \(context)")
    checkSnapshotBytes(decoded, format, encoded, context)

    // Encoding the path and decoding that again gives the same path, element bytes and all, and no layout.
    let again: SceneFileCodec.Decoded
    do throws(SceneFileError) {
        again = try codec.decode(encoded)
    } catch {
        fatalError("the encoded path is refused (\(error)): \(show(encoded)) from \(context)")
    }
    require(again.path == decoded.path && again.format == decoded.format, "re-decoded path differs: \(context)")
    require(again.layout == nil, "the encoding keeps a layout: \(show(encoded))")
    for (left, right) in zip(decoded.path, again.path) {
        require(
            left.tag == right.tag && left.item == right.item && left.itemLiteral == right.itemLiteral
                && left.tagLiteral == right.tagLiteral,
            "element bytes change through encode: \(left) vs \(right) in \(context)")
    }

    // A change next to them keeps the other elements' bytes as the file had them (§3): a push and a pop.
    let extra = format == .codable ? Element(tag: "Fuzz.Pushed", value: .null) : Element(tag: nil, value: .null)
    if decoded.path.count < codec.maxDepth {
        let pushed = SceneFileCodec.encode(decoded.path + [extra], as: format)
        checkPreserved(bytes, model.spans, pushed, count: decoded.path.count, format, "after a push: \(context)")
    }
    if !decoded.path.isEmpty {
        let popped = SceneFileCodec.encode(Array(decoded.path.dropLast()), as: format)
        checkPreserved(bytes, model.spans, popped, count: decoded.path.count, format, "after a pop: \(context)")
    }

    if clientSet, decoded.format != nil, decoded.path.count < codec.maxDepth {
        checkClientSet(codec, bytes, decoded, model, extra, context)
    }
}

/// A state's file bytes, as snapshots and write-backs take them straight from its element records (or its kept
/// layout), are the encoding of its path, counted exactly; a snapshot of it gives the same bytes back.
func checkSnapshotBytes(
    _ decoded: SceneFileCodec.Decoded, _ format: SceneFormat, _ encoded: [UInt8], _ context: String
) {
    guard let scene = SceneID("fuzz") else { fatalError("invalid scene ID") }
    let records = SceneState(id: scene, version: 1, created: 1, modified: 1, format: format, path: decoded.path)
    require(records.fileBytes == encoded, "file bytes from the records differ from encode: \(context)")
    require(records.fileByteCount == encoded.count, "fileByteCount from the records: \(context)")
    let state = SceneState(
        id: scene, version: 1, created: 1, modified: 1, format: format, path: decoded.path, layout: decoded.layout)
    let snapshot = Snapshot(epoch: "fuzz", revision: 1, time: "t", reason: .request, scenes: [state])
    let bytes = snapshot.encode()
    // Beside the records' scene, in one piece per entry, as the daemon writes a snapshot in pieces: the same bytes
    // as the whole document.
    guard let other = SceneID("fuzz-records") else { fatalError("invalid scene ID") }
    var pair = snapshot
    pair.scenes.append(
        SceneState(id: other, version: 2, created: 1, modified: 2, format: format, path: decoded.path))
    var encoder = pair.encoder()
    var pieces: [UInt8] = []
    var piece: [UInt8] = []
    var count = 0
    var more = true
    while more {
        piece.removeAll(keepingCapacity: true)
        more = encoder.encodeNext(into: &piece, upTo: 1)
        pieces += piece
        count += 1
    }
    require(count == 2 && pieces == pair.encode(), "a snapshot in pieces differs from it whole: \(context)")
    do throws(SnapshotError) {
        let restored = try Snapshot.decode(bytes)
        require(
            restored.scenes.map(\.fileBytes) == [state.fileBytes], "the snapshot changes the file's bytes: \(context)")
    } catch {
        fatalError("the snapshot is refused (\(error)): \(context)")
    }
}

/// A file change that reads the file, then a client `set` of the same elements as the wire spells them (compact,
/// numbers as parsed) plus one more: the equal elements keep the file's bytes, and without the extra element the
/// set is no change at all.
func checkClientSet(
    _ codec: SceneFileCodec, _ bytes: [UInt8], _ decoded: SceneFileCodec.Decoded, _ model: FileModel,
    _ extra: Element, _ context: String
) {
    guard let scene = SceneID("fuzz") else { fatalError("invalid scene ID") }
    var store = SceneStore(epoch: "fuzz", codec: codec)
    guard case .changed = store.applyFile(scene, bytes: bytes) else { fatalError("file not merged: \(context)") }
    require(store.scene(scene)?.fileBytes == bytes, "the store's file bytes differ from the file: \(context)")
    let respelled = decoded.path.map { Element(tag: $0.tag, value: $0.value) }
    do throws(SceneSyncError) {
        let same = try store.plan(.set(path: respelled, format: nil), on: scene, origin: Origin(source: .client))
        require(same.isNoOp, "a set of equal elements is a change: \(context)")
        let grown = try store.plan(
            .set(path: respelled + [extra], format: nil), on: scene, origin: Origin(source: .client))
        guard let written = grown.fileBytes else { fatalError("a set writes no file: \(context)") }
        checkPreserved(
            bytes, model.spans, written, count: decoded.path.count, decoded.format ?? .array,
            "after a client set: \(context)")
    } catch {
        fatalError("client set refused (\(error)): \(context)")
    }
}

/// The elements `0..<count` (root first) of `original`, a file of `count` elements, appear with the same bytes in
/// `changed`, a file with one element more (a push) or less (a pop) on top.
func checkPreserved(
    _ original: [UInt8], _ spans: [Range<Int>], _ changed: [UInt8], count: Int, _ format: SceneFormat,
    _ context: String
) {
    let changedSpans = entrySpans(changed)
    let changedCount = format == .codable ? changedSpans.count / 2 : changedSpans.count
    for index in 0..<min(count, changedCount) {
        switch format {
        case .array:
            require(original[spans[index]] == changed[changedSpans[index]], "element \(index) rewritten \(context)")
        case .codable:
            let before = (count - 1 - index) * 2
            let after = (changedCount - 1 - index) * 2
            require(
                original[spans[before]] == changed[changedSpans[after]],
                "tag of element \(index) rewritten: \(show(original[spans[before]])) became "
                    + "\(show(changed[changedSpans[after]])) \(context)")
            require(
                original[spans[before + 1]] == changed[changedSpans[after + 1]],
                "item of element \(index) rewritten: \(show(original[spans[before + 1]])) became "
                    + "\(show(changed[changedSpans[after + 1]])) \(context)")
        }
    }
}

/// A rejection names a reason §3 gives, and the right one.
func checkRejection(_ error: SceneFileError, _ codec: SceneFileCodec, _ bytes: [UInt8], _ model: FileModel) {
    let context = "\(codec.policy) rejected \(show(bytes)) with \(error)"
    if case .tooLarge(let count, let limit) = error {
        require(count == bytes.count && limit == codec.maxFileBytes && count > limit, context)
        return
    }
    require(bytes.count <= codec.maxFileBytes, "a file over the size limit: \(context)")
    switch error {
    case .tooLarge:
        break
    case .invalidJSON:
        require(!model.isValidJSON, "valid JSON called invalid: \(context)")
    case .notAnArray:
        require(model.isValidJSON && model.entries == nil, context)
    case .tooManyElements(_, let limit):
        // Each element is at least one entry, so a file over the limit has more entries than elements allowed.
        require(limit == codec.maxDepth && (model.entries?.count ?? 0) > limit, context)
    case .oddLength, .notAString, .invalidItem:
        require(codec.policy == .codable, "only a pinned codable format refuses a misfit: \(context)")
        guard let entries = model.entries else { fatalError("a misfit that is not an array: \(context)") }
        if let refusal = model.codableRefusal {
            require(error == refusal, "expected \(refusal): \(context)")
        } else if case .invalidItem(let index, _) = error {
            require(index % 2 == 1, context)
            let item = entries[index].stringValue.map { Array($0.utf8) } ?? []
            require((try? JSONParser.validate(item)) == nil, "a valid item called invalid: \(context)")
        } else {
            fatalError(context)
        }
    }
    // A broken file is reported as broken, never as too long or as the wrong kind.
    if !model.isValidJSON {
        guard case .invalidJSON = error else { fatalError("invalid JSON rejected as something else: \(context)") }
    }
}

/// Where each entry of a top-level array is: the snapshot decoder's own span finder, which uses the parser's
/// skipping. Only called on valid arrays.
func entrySpans(_ bytes: [UInt8]) -> [Range<Int>] {
    do throws(JSONError) {
        return try JSONParser.elementSpans(of: bytes, in: 0..<bytes.count)
    } catch {
        fatalError("not a valid array (\(error)): \(show(bytes))")
    }
}
