import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension StartupScan {
    /// Lists `directory`, removes the daemon's own temp files from it, and checks each listed file against the index
    /// at `indexPath` when that index was written with the snapshot `expected` names (the clean-shutdown marker's)
    /// under the codec's limits `codec`. Call it only once the directory is watched.
    static func run(
        directory: String, indexPath: String, expected: StateDirectory.CleanShutdown?, codec: String,
        on io: BlockingIO
    ) async -> StartupScan {
        // After the watch started, before the listing: every file is listed and checked (or later read) after it.
        let moment = SceneFileIndex.now()
        let started = ContinuousClock.now
        // Read while the directory is listed.
        async let loadedIndex = matchingIndex(at: indexPath, of: expected, codec: codec, on: io)
        let listing = await io.run { () -> Result<(names: [String], removed: [String]), SystemError> in
            do throws(SystemError) {
                let names = try FileSystem.list(directory)
                // A crash between writing a temp file and renaming it left these; the scene's state is in the
                // snapshot or its file, never only there.
                let removed = names.filter { name in
                    EngineCore.isOwnTempName(name) && unlink(directory + "/" + name) == 0
                }
                return .success((names, removed))
            } catch {
                return .failure(error)
            }
        }
        let listed = ContinuousClock.now
        let index = await loadedIndex
        let indexLoaded = ContinuousClock.now
        let result: Result<Listing, SystemError>
        switch listing {
        case .success(let (names, removed)):
            // Each scene with the name it was listed under: the check looks the file up by that name, not one made
            // again from the ID for each of them.
            let scenes = names.compactMap { name in SceneID(fileName: name).map { (id: $0, name: name) } }
            let files = scenes.map(\.id)
            var check: Check? = nil
            if let index {
                check = Check(
                    epoch: index.epoch, revision: index.revision, codec: index.codec,
                    unchanged: await unchangedDigests(of: scenes, in: directory, index: index.files, on: io))
            }
            result = .success(Listing(files: files, removed: removed, check: check))
        case .failure(let error):
            result = .failure(error)
        }
        let finished = ContinuousClock.now
        return StartupScan(
            moment: moment, listing: result,
            timings: Timings(
                listing: listed - started, index: indexLoaded - listed, check: finished - indexLoaded,
                total: finished - started))
    }

    /// The index at `path` if it is of the snapshot `expected` names; without a marker the restore starts a new
    /// epoch, which no index is of, so nothing is read.
    static func matchingIndex(
        at path: String, of expected: StateDirectory.CleanShutdown?, codec: String, on io: BlockingIO
    ) async -> SceneFileIndex? {
        guard let expected else { return nil }
        return await io.run {
            SceneFileIndex.load(from: path, epoch: expected.epoch, revision: expected.revision, codec: codec)
        }
    }

    /// For each of `files`, the digest `index` records for it if the file is still exactly as recorded: one
    /// `fstatat` per file, on every thread of the blocking executor.
    static func unchangedDigests(
        of files: [(id: SceneID, name: String)], in directory: String, index: [SceneID: SceneFileIndex.Stamp],
        on io: BlockingIO
    ) async -> [UInt64?] {
        // The directory is opened once for all of them; without it, each file's own path is looked up.
        let directoryFD = await io.run { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        let digests = await io.runOnEveryThread(count: files.count) { position -> UInt64? in
            guard let stamp = index[files[position].id] else { return nil }
            let name = files[position].name
            let unchanged =
                directoryFD >= 0
                ? SceneFileIndex.isUnchanged(name, in: directoryFD, since: stamp)
                : SceneFileIndex.isUnchanged(directory + "/" + name, since: stamp)
            return unchanged ? stamp.digest : nil
        }
        if directoryFD >= 0 { await io.run { _ = close(directoryFD) } }
        return digests
    }
}
