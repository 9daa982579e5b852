import AFProxyModel
import Testing

@Suite struct HexTests {
    @Test func bytesBecomeTwoLowercaseDigitsEachAndReadBack() {
        let bytes: [UInt8] = [0x00, 0x0f, 0xa5, 0xff]
        #expect(bytes.hexString == "000fa5ff")
        #expect([UInt8]().hexString.isEmpty)
        for byte in UInt8.min...UInt8.max {
            let (high, low) = byte.hexDigits
            #expect(high.hexDigitValue! << 4 | low.hexDigitValue! == byte)
        }
    }
}
