import Testing

@testable import AFProxyManager

@Suite struct DownloadURLTests {
    @Test func theFileNameIsTheLastPathSegmentDecoded() {
        #expect(DownloadURL.fileName(of: "https://h/a/b/report%20v2.pdf?x=1#f") == .some("report v2.pdf"))
        #expect(DownloadURL.fileName(of: "HTTP://h:8080/f.iso") == .some("f.iso"))
    }

    @Test func aURLThatNamesNoFileLeavesTheNameToTheAnswer() {
        for url in ["http://h", "http://h/", "http://h/dir/", "http://h/..", "http://h/a%2Fb"] {
            #expect(DownloadURL.fileName(of: url) == .some(nil), "\(url)")
        }
    }

    @Test func onlyHttpAndHttpsWithAHostAreDownloads() {
        for url in ["ftp://h/f", "file:///etc/passwd", "http:///f", "https://", "http://h/a b", "h/f"] {
            #expect(DownloadURL.fileName(of: url) == nil, "\(url)")
        }
    }
}
