import AFProxyAPI
import AFProxyModel
import FoundationEssentials
import Testing

@testable import AFProxyCLI

/// What `afproxyctl download` checks before it sends anything, and the body it sends.
@Suite struct DownloadArgumentsTests {
    private func body(
        _ url: String, output: String? = nil, headers: [String] = [], sha256: String? = nil,
        directory: String = "/home/u/work"
    ) throws(DownloadArguments.Problem) -> DownloadRequestBody {
        try DownloadArguments(url: url, output: output, headers: headers, sha256: sha256).body(directory: directory)
    }

    private func problem(
        _ url: String, output: String? = nil, headers: [String] = [], sha256: String? = nil
    ) -> DownloadArguments.Problem? {
        do {
            _ = try self.body(url, output: output, headers: headers, sha256: sha256)
            return nil
        } catch {
            return error
        }
    }

    @Test func httpAndHTTPSURLsAreSentAsGiven() throws {
        #expect(try self.body("http://example.test/a.iso").url == "http://example.test/a.iso")
        #expect(try self.body("https://example.test/a.iso").url == "https://example.test/a.iso")
        #expect(try self.body("HTTPS://example.test/").url == "HTTPS://example.test/")
    }

    /// Refused like the daemon refuses it (exit 1), not as a usage error.
    @Test func anyOtherSchemeIsRefused() {
        for url in ["ftp://example.test/f", "file:///etc/passwd", "example.test/f", "http:/x", "httpx://h/", ""] {
            #expect(
                self.problem(url) == .refused("only http:// and https:// URLs can be downloaded: \(url)"), "\(url)")
        }
    }

    @Test func aRelativeOutputIsResolvedAgainstTheCallersDirectory() throws {
        #expect(try self.body("http://h/f", output: "out.bin").path == "/home/u/work/out.bin")
        #expect(try self.body("http://h/f", output: "./d/out.bin").path == "/home/u/work/d/out.bin")
        #expect(try self.body("http://h/f", output: "../out.bin").path == "/home/u/work/../out.bin")
        #expect(try self.body("http://h/f", output: "x", directory: "/").path == "/x")
        #expect(try self.body("http://h/f", output: "/tmp/abs").path == "/tmp/abs")
        #expect(try self.body("http://h/f").path == nil)
        #expect(self.problem("http://h/f", output: "") == .usage("-o takes a path, not an empty string"))
    }

    @Test func theSHA256IsSixtyFourHexDigitsSentInLowercase() throws {
        let hex = String(repeating: "aB3", count: 21) + "f"
        #expect(try self.body("http://h/f", sha256: hex).sha256 == hex.lowercased())
        for bad in [String(hex.dropLast()), hex + "0", String(hex.dropLast()) + "g", ""] {
            #expect(self.problem("http://h/f", sha256: bad) == .usage("--sha256 takes 64 hex digits, not \(bad)"))
        }
    }

    @Test func headersAreNameColonValueWithATokenName() throws {
        let body = try self.body("http://h/f", headers: ["Authorization:  Bearer x ", "X-A:b", "Accept:"])
        #expect(body.headers == ["Authorization: Bearer x", "X-A: b", "Accept: "])
        for bad in ["NoColon", ": value", "Bad Name: v", "Naïve: v", "A: line\r\nInjected: 1", "A: nul\u{0}"] {
            #expect(self.problem("http://h/f", headers: [bad]) == .usage("--header takes 'Name: value', not \(bad)"))
        }
        #expect(try self.body("http://h/f", headers: ["X-Tab: a\tb"]).headers == ["X-Tab: a\tb"])
    }

    /// afproxyctl always says what it wants of force, keep-partial and headers; a path and a
    /// SHA-256 only when given.
    @Test func theBodyAfproxyctlSends() throws {
        let minimal = try Download.encoded(DownloadArguments(url: "http://h/a/b").body(directory: "/"))
        #expect(
            String(decoding: minimal, as: UTF8.self)
                == #"{"force":false,"headers":[],"keepPartial":false,"url":"http://h/a/b"}"#)
        var arguments = DownloadArguments(url: "https://h/f", output: "f", headers: ["A:b"])
        arguments.sha256 = String(repeating: "A", count: 64)
        arguments.force = true
        arguments.keepPartial = true
        #expect(
            String(decoding: try Download.encoded(arguments.body(directory: "/d")), as: UTF8.self)
                == #"{"force":true,"headers":["A: b"],"keepPartial":true,"path":"/d/f","#
                + #""sha256":"\#(String(repeating: "a", count: 64))","url":"https://h/f"}"#)
    }

}
