import Foundation
import Synchronization

#if AFPROXY_FUZZING
import FuzzDriver
#endif

/// What the fuzz targets share: their main, and the check that fails a run.
///
/// A plain build's main replays corpus files without libFuzzer (`make test` runs the seed corpus
/// through it). Built with `-DAFPROXY_FUZZING` (scripts/sanitize's address build, which
/// scripts/fuzz runs) the same main hands the target to libFuzzer's driver instead.
package enum FuzzHarness {
    /// What libFuzzer's driver runs each input through, set once before it starts. In a class:
    /// a closure kept in the Mutex itself came back wrapped in one more reabstraction thunk from
    /// every `withLock`, and the thousandth input ran through a thousand of them.
    private static let target = Mutex<Target?>(nil)

    private final class Target: Sendable {
        let body: @Sendable (UnsafeRawBufferPointer) -> Void

        init(_ body: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) { self.body = body }
    }

    /// The file being replayed, named when a check fails (empty under libFuzzer, which saves the
    /// input itself).
    private static let currentInput = Mutex("")

    /// An invariant of the code under test. When it does not hold the run ends: under libFuzzer
    /// with an abort, so that it saves the input as a crash; a replay names the file and exits 1.
    package static func check(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        guard !condition() else { return }
        let input = Self.currentInput.withLock { $0 }
        if input.isEmpty {
            // Under libFuzzer: the abort makes it save the input and stop.
            FileHandle.standardError.write(Data("invariant failed at \(file):\(line): \(message())\n".utf8))
            abort()
        }
        FileHandle.standardError.write(Data("invariant failed at \(file):\(line) on \(input): \(message())\n".utf8))
        exit(1)
    }

    /// A field as it goes into a message: the name a token (RFC 9110 §5.6.2), the value without a
    /// byte that would end or split a line, or one §5.5 forbids (controls other than HTAB).
    package static func checkField(name: String, value: String, _ what: String) {
        Self.check(Self.isToken(name), "\(what): field name \(name.debugDescription)")
        Self.check(
            !value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F },
            "\(what): value of \(name) holds a control byte: \(value.debugDescription)")
    }

    /// tchar+ of RFC 9110 §5.6.2.
    package static func isToken(_ string: String) -> Bool {
        !string.isEmpty
            && string.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default:
                    "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    /// A fuzz target's main. In a plain build it runs `body` on each file named on the command
    /// line and on every file under each directory named (sorted, recursively), then exits 0; 1
    /// when a path cannot be read or names no file at all, 2 without arguments. Built for fuzzing
    /// it gives the command line to libFuzzer, which then calls `body` with each input.
    package static func main(_ name: String, _ body: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) -> Never {
        #if AFPROXY_FUZZING
        Self.target.withLock { $0 = Target(body) }
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(
            LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                let target = FuzzHarness.target.withLock { $0 }
                target?.body(UnsafeRawBufferPointer(start: data, count: size))
                return 0
            })
        #else
        exit(Self.replay(name, arguments: Array(CommandLine.arguments.dropFirst()), body))
        #endif
    }

    private static func replay(_ name: String, arguments: [String], _ body: (UnsafeRawBufferPointer) -> Void) -> Int32 {
        guard !arguments.isEmpty else {
            FileHandle.standardError.write(Data("usage: \(name) FILE|DIRECTORY...\n".utf8))
            return 2
        }
        var count = 0
        for path in arguments {
            guard let files = Self.files(at: path) else {
                FileHandle.standardError.write(Data("\(name): cannot read \(path)\n".utf8))
                return 1
            }
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("\(name): cannot read \(file)\n".utf8))
                    return 1
                }
                Self.currentInput.withLock { $0 = file }
                data.withUnsafeBytes(body)
                count += 1
            }
        }
        Self.currentInput.withLock { $0 = "" }
        guard count > 0 else {
            FileHandle.standardError.write(
                Data("\(name): no input files in \(arguments.joined(separator: " "))\n".utf8))
            return 1
        }
        print("\(name): \(count) inputs replayed, every invariant held")
        return 0
    }

    private static func files(at path: String) -> [String]? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        guard isDirectory.boolValue else { return [path] }
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return nil }
        var files: [String] = []
        for case let relative as String in enumerator {
            let full = (path as NSString).appendingPathComponent(relative)
            var nested: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &nested), !nested.boolValue {
                files.append(full)
            }
        }
        return files.sorted()
    }
}
