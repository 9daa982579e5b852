import AFProxyModel
import Testing

/// Credentials out of a client's command line before afproxy keeps or logs it, in the spellings
/// of curl, wget and HTTPie; everything else as it was.
@Suite struct CommandLineRedactionTests {
    private func redact(_ line: [String]) -> [String] { CommandLineRedaction.redact(line) }

    @Test func optionsWhoseValueIsACredential() {
        #expect(
            self.redact(["curl", "-u", "alice:pw", "-x", "http://p:3128", "http://h/"])
                == ["curl", "-u", "<redacted>", "-x", "http://p:3128", "http://h/"])
        #expect(
            self.redact(["curl", "-ualice:pw", "--user=alice:pw"]) == ["curl", "-u<redacted>", "--user=<redacted>"])
        #expect(
            self.redact(["curl", "-b", "sid=1", "--oauth2-bearer", "t"]) == [
                "curl", "-b", "<redacted>", "--oauth2-bearer", "<redacted>",
            ])
        #expect(
            self.redact(["wget", "--password=pw", "--http-password", "pw"]) == [
                "wget", "--password=<redacted>", "--http-password", "<redacted>",
            ])
    }

    @Test func headerFieldsKeepTheirNameOnly() {
        #expect(
            self.redact(["curl", "-H", "Authorization: Bearer t", "-H", "X-Trace: 42", "-HCookie: a=b"])
                == ["curl", "-H", "Authorization: <redacted>", "-H", "X-Trace: 42", "-HCookie: <redacted>"])
        #expect(
            self.redact(["wget", "--header=proxy-authorization: Basic eA=="]) == [
                "wget", "--header=proxy-authorization: <redacted>",
            ])
        #expect(
            self.redact(["http", "GET", "h.test", "Authorization:Bearer t", "X-A:1"]) == [
                "http", "GET", "h.test", "Authorization: <redacted>", "X-A:1",
            ])
    }

    @Test func urlUserInfoAndSecretAssignments() {
        #expect(
            self.redact(["git", "clone", "https://alice:tok@git.test/r.git"]) == [
                "git", "clone", "https://<redacted>@git.test/r.git",
            ])
        #expect(self.redact(["curl", "http://h.test/a@b?c=d@e"]) == ["curl", "http://h.test/a@b?c=d@e"])  // no userinfo
        #expect(
            self.redact(["env", "API_TOKEN=t", "DB_PASSWORD=p", "LANG=C", "./run"]) == [
                "env", "API_TOKEN=<redacted>", "DB_PASSWORD=<redacted>", "LANG=C", "./run",
            ])
        #expect(self.redact(["python3", "-m", "http.server", "8000"]) == ["python3", "-m", "http.server", "8000"])
    }

    @Test func procCommandLinesAreRedactedBeforeTheyAreJoined() {
        let proc = Array("curl\0-H\0Authorization: Bearer s3cret\0-u\0a:b\0http://h/\0".utf8)
        #expect(
            ClientProcess.commandLine(fromProc: proc) == "curl -H Authorization: <redacted> -u <redacted> http://h/")
    }
}
