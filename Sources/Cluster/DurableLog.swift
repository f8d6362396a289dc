// The one shape of every stream the cluster keeps as a log (a partition's journal, an account
// partition's inbox, the shared history): file storage on `replicas` servers, new messages
// refused rather than old ones dropped when a limit is reached, and no message deleted one by
// one. Only a purge through a snapshot's sequence shortens one.
import NATSClient

extension StreamConfiguration {
    public static func durableLog(name: String, subject: String, replicas: Int) -> StreamConfiguration {
        var configuration = StreamConfiguration(name: name, subjects: [subject])
        configuration.replicas = replicas
        configuration.storage = .file
        configuration.discard = .new
        configuration.deniesDelete = true
        return configuration
    }
}
