import AFProxyAPI
import ArgumentParser
import FoundationEssentials

/// `afproxyctl ca`: the local CA that intercepted HTTPS connections are signed by, created on this
/// first use: where its certificate is and its fingerprint, to install it where clients look.
struct CA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Print the local CA's certificate path and SHA-256 fingerprint (creating the CA on first use).",
        discussion: """
            HTTPS interception signs certificates with this CA; clients accept them only once they trust it. \
            Whoever holds its key (ca-key.pem, 0600, beside the certificate in ca-dir) can read what those \
            clients send, so trust it only on this machine. With FILE the certificate path printed:

            Debian, system-wide (curl, wget, git, most programs):
              cp FILE /usr/local/share/ca-certificates/afproxy.crt
              update-ca-certificates
            Chromium, Firefox (NSS):
              certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n afproxy -i FILE
            curl, wget, one command:
              curl --cacert FILE …   wget --ca-certificate=FILE …
            Python:
              SSL_CERT_FILE=FILE (ssl, httpx)   REQUESTS_CA_BUNDLE=FILE (requests, pip)
            Node:
              NODE_EXTRA_CA_CERTS=FILE

            --regenerate makes a new key and certificate (the old one must then be removed where it was installed).
            """)

    @ParentCommand var root: AFProxyCtl
    var global: GlobalOptions { self.root.global }
    @Flag(name: .long, help: "Print the certificate in PEM, as in the file.") var pem = false
    @Flag(name: .long, help: "Replace the CA with a new key and certificate.") var regenerate = false
    @Flag(name: .long, help: "Print the API's JSON.") var json = false

    func run() throws {
        let body =
            self.regenerate ? try self.global.call("POST", "/v1/ca/regenerate") : try self.global.call("GET", "/v1/ca")
        if self.json { return Console.output(String(decoding: body, as: UTF8.self)) }
        let summary = try Console.decoder().decode(CertificateAuthoritySummary.self, from: Data(body))
        if self.pem { return Console.output(summary.certificatePEM) }
        Console.output(
            """
            certificate: \(summary.certificatePath)
            sha256:      \(summary.fingerprintSHA256)
            subject:     \(summary.subject)
            valid:       \(summary.notBefore.formatted(.iso8601)) to \(summary.notAfter.formatted(.iso8601))
            """)
    }
}
