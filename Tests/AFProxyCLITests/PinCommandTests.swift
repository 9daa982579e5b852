import Testing

@testable import AFProxyCLI

@Suite struct PinCommandTests {
    @Test func theTargetIsHostWithAnOptionalPort() {
        #expect(Pin.split("example.org")! == ("example.org", 443))
        #expect(Pin.split("example.org:8443")! == ("example.org", 8443))
        #expect(Pin.split("[::1]")! == ("::1", 443))
        #expect(Pin.split("[::1]:8443")! == ("::1", 8443))
        for bad in ["", ":443", "h:0", "h:65536", "h:x", "a:b:c", "[::1", "[::1]x"] {
            #expect(Pin.split(bad) == nil, "\(bad)")
        }
    }

    @Test func theHostIsEscapedForTheQuery() {
        #expect(Pin.escaped("a.b-c_d") == "a.b-c_d")
        #expect(Pin.escaped("a b&c") == "a%20b%26c")
    }

    @Test func downloadPinsAreCheckedAndSentApartAndInsecureOnlyWhenAsked() throws {
        let pin = "sha256//YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="
        var arguments = DownloadArguments(url: "https://h/f", pins: ["\(pin);\(pin)"], insecure: true)
        let body = try arguments.body(directory: "/")
        #expect(body.pins == [pin, pin])
        #expect(body.insecure == true)
        arguments.pins = ["md5//x"]
        #expect(throws: DownloadArguments.Problem.self) { try arguments.body(directory: "/") }
        let plain = try DownloadArguments(url: "https://h/f").body(directory: "/")
        #expect(plain.pins == nil && plain.insecure == nil)
    }
}
