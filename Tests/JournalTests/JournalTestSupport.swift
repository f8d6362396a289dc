import Dispatch
import Foundation
import Platform
import Synchronization
import Testing
@testable import Journal

/// A fresh directory under the system temp directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("journal-tests-\(UUID().uuidString)").path
    }

    func file(_ name: String) -> String { path + "/" + name }

    func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    func segmentNames() -> [String] { names().filter { $0.hasPrefix("journal-") && $0.hasSuffix(".log") } }
    func snapshotNames() -> [String] { names().filter { $0.hasSuffix(".snap") } }

    func bytes(of name: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: file(name)) ?? Data()) }
    func write(_ bytes: [UInt8], to name: String) { _ = FileManager.default.createFile(atPath: file(name), contents: Data(bytes)) }
    func size(of name: String) -> Int { bytes(of: name).count }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Faults to inject, per operation, consumed one per call in order; and an optional gate that
/// holds the next sync until the test opens it.
final class FaultScript: Sendable {
    private struct State {
        var planned: [SystemCall: [InjectedFault?]] = [:]
        var heldSync: (gate: DispatchSemaphore, arrived: DispatchSemaphore?)?
        var syncsHeld = 0
    }
    private let state = Mutex(State())

    /// `nil` entries let a call through, so a script can fail, say, the second sync.
    func inject(_ faults: [InjectedFault?], into operation: SystemCall) {
        state.withLock { $0.planned[operation, default: []].append(contentsOf: faults) }
    }

    /// The next sync signals `arrived`, then blocks until `gate` is signalled.
    func holdNextSync(until gate: DispatchSemaphore, arrived: DispatchSemaphore? = nil) {
        state.withLock { $0.heldSync = (gate, arrived) }
    }

    var syscalls: Syscalls {
        Syscalls(injectingFaults: { [self] operation in
            let (fault, gate): (InjectedFault??, (gate: DispatchSemaphore, arrived: DispatchSemaphore?)?) = state.withLock { state in
                var gate: (gate: DispatchSemaphore, arrived: DispatchSemaphore?)?
                if operation == .sync, let held = state.heldSync {
                    gate = held
                    state.heldSync = nil
                }
                guard var faults = state.planned[operation], !faults.isEmpty else { return (nil, gate) }
                let fault = faults.removeFirst()
                state.planned[operation] = faults
                return (fault, gate)
            }
            if let gate {
                gate.arrived?.signal()
                gate.gate.wait()
            }
            return fault ?? nil
        })
    }
}

func configuration(_ policy: SyncPolicy = .always, segmentSize: Int = 64 << 20, faults: FaultScript? = nil,
                   compressesSnapshots: Bool = true) -> JournalConfiguration {
    var configuration = JournalConfiguration(syncPolicy: policy, segmentSize: segmentSize, compressesSnapshots: compressesSnapshots)
    if let faults { configuration.syscalls = faults.syscalls }
    return configuration
}

func openJournal(_ directory: TemporaryDirectory, _ configuration: JournalConfiguration = JournalConfiguration())
    throws(JournalError) -> (journal: WriteAheadLog, recovery: Recovery)
{
    try WriteAheadLog.open(directory: directory.path, configuration: configuration)
}

/// Appends and waits for the completion.
@discardableResult
func appendAndWait(_ journal: WriteAheadLog, _ payload: [UInt8]) async -> Result<UInt64, JournalError> {
    await withCheckedContinuation { continuation in
        journal.append(payload) { continuation.resume(returning: $0) }
    }
}

func payload(_ index: Int, length: Int = 24) -> [UInt8] {
    (0..<length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
}

/// Appends `count` records one after the other, each waited for, and returns their payloads.
func appendRecords(_ journal: WriteAheadLog, count: Int, startingAt first: Int = 1, length: Int = 24) async throws -> [[UInt8]] {
    var payloads: [[UInt8]] = []
    for index in first..<first + count {
        let bytes = payload(index, length: length)
        _ = try await appendAndWait(journal, bytes).get()
        payloads.append(bytes)
    }
    return payloads
}

/// Where each record starts in a segment's bytes.
func recordOffsets(in segment: [UInt8]) -> [Int] {
    var offsets: [Int] = []
    var offset = SegmentHeader.size
    while offset + RecordFormat.headerSize <= segment.count {
        offsets.append(offset)
        offset += RecordFormat.headerSize + Int(segment.readLittleEndian(at: offset, as: UInt32.self))
    }
    return offsets
}

/// The JournalError `body` throws, or nil when it succeeds. Records an issue for any other error.
func errorOf<T>(_ body: () throws -> T) -> JournalError? {
    do {
        _ = try body()
        return nil
    } catch let error as JournalError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}
