// The child's end of the parent↔child protocol of a multi-process run, over its standard
// input and output: the child writes "ready" once its connections are open, the parent
// answers "go" when every child is ready. Results travel in the `--json` file.
import Foundation

struct ChildCoordinator {
    static let readyLine = "ready"
    static let goLine = "go"

    func reportReadyAndWaitForGo() {
        FileHandle.standardOutput.write(Data((Self.readyLine + "\n").utf8))
        while let line = readLine() {
            if line == Self.goLine { return }
        }
        // The parent went away: finish the run rather than hang.
    }
}
