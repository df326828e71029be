import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening the socket: what each failure to connect means to a client (no daemon, a daemon too busy to accept, a
/// path too long).
extension SceneSyncConnection {
    /// How long a connection attempt goes on while the daemon's queue of new connections is full.
    static let busyDaemonWait = Duration.seconds(2)

    /// Connects, trying again while the daemon's queue of connections not accepted yet is full: a non-blocking
    /// `connect(2)` to a Unix socket then fails with `EAGAIN` at once, although the daemon is there and accepts them
    /// a moment later (seen under heavy load). Anything else fails at once. `busyWait` is there for tests, whose
    /// machine may be slower than any deadline a user would want.
    static func openChannel(
        _ path: String, busyWait: Duration = busyDaemonWait
    ) async throws -> NIOAsyncChannel<[UInt8], ByteBuffer> {
        let deadline = ContinuousClock.now + busyWait
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try await attemptChannel(path)
            } catch let error as IOError where error.errnoCode == EAGAIN && ContinuousClock.now < deadline {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(64))
            } catch let error as IOError where error.errnoCode == EAGAIN {
                throw SceneSyncConnectionError.connectFailed(
                    path: path, reason: "the daemon's queue of new connections stayed full for \(busyWait)")
            }
        }
    }

    private static func attemptChannel(_ path: String) async throws -> NIOAsyncChannel<[UInt8], ByteBuffer> {
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LineFrameDecoder(maxLength: maxLineBytes)))
                        return try NIOAsyncChannel<[UInt8], ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch let error as IOError where error.errnoCode == EAGAIN {
            throw error
        } catch let error as IOError {
            let reason = String(cString: strerror(error.errnoCode))
            switch error.errnoCode {
            case ENOENT, ECONNREFUSED, ENOTSOCK, ENOTDIR:
                throw SceneSyncConnectionError.noDaemon(path: path, reason: reason)
            default: throw SceneSyncConnectionError.connectFailed(path: path, reason: reason)
            }
        } catch SocketAddressError.unixDomainSocketPathTooLong {
            throw SceneSyncConnectionError.connectFailed(
                path: path, reason: "the path is longer than the 107 bytes a Unix socket address holds")
        } catch {
            throw SceneSyncConnectionError.connectFailed(path: path, reason: "\(error)")
        }
    }
}
