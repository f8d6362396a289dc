// The gauges an operator's alerts read that no counter holds: whether the server is ready, who
// is logged in, how much room the data directory's disk has left and how much the journal takes
// of it, and when the TLS certificate expires. Read at each scrape, off every hot path: a
// statvfs, a listing of the data directory, and the certificate file's notAfter.
import Foundation
import SocketServer

package enum HostMetrics {
    package static func render(isReady: Bool, loggedInUsers: Int, configuration: ServerConfiguration) -> String {
        var out = ""
        func gauge(_ name: String, _ help: String, _ value: Int64) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
        }
        gauge("bangbang_ready", "1 once the state is recovered and requests are served (as /readyz), else 0.", isReady ? 1 : 0)
        gauge("bangbang_logged_in_users", "Users with at least one logged-in connection now.", Int64(loggedInUsers))
        let directory = configuration.dataDirectory
        var disk = statvfs()
        if statvfs(directory, &disk) == 0 {
            let block = Int64(disk.f_frsize)
            gauge("bangbang_data_directory_free_bytes", "Bytes free for this user on the data directory's file system.",
                  Int64(disk.f_bavail) * block)
            gauge("bangbang_data_directory_size_bytes", "Size of the data directory's file system.", Int64(disk.f_blocks) * block)
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var journal: Int64 = 0
        for name in files where name.hasPrefix("journal-") && name.hasSuffix(".log") {
            var status = stat()
            if stat(directory + "/" + name, &status) == 0 { journal += Int64(status.st_size) }
        }
        gauge("bangbang_journal_bytes", "Bytes of journal segments in the data directory (zero-filled ahead of the writer).", journal)
        if let certificate = configuration.tlsCertificatePath,
           let expiry = try? TLSCertificateFile.expiry(ofCertificateAt: certificate) {
            gauge("bangbang_tls_certificate_expiry_timestamp_seconds",
                  "When the TLS certificate served (--tls-cert, as read now) stops being valid, in seconds since the epoch.", expiry)
        }
        return out
    }
}
