import CDecode

/// A recorded body's content codings undone, for viewing only (`GET /v1/tasks/{id}/body?decoded=1`,
/// `afproxyctl body --decoded`): what the client got stays as it passed. gzip, deflate (zlib's
/// wrapping, or raw as some servers send it) and br, in the order they were applied, undone last
/// first. The output is bounded (`limit`): a small body may stand for a huge one.
package enum ContentDecoder {
    package enum Failure: Error, Equatable, CustomStringConvertible {
        case unknownCoding(String)
        case corrupt(String)

        package var description: String {
            switch self {
            case .unknownCoding(let coding): "the content coding \(coding) cannot be decoded (gzip, deflate and br can)"
            case .corrupt(let coding): "the body is not valid \(coding)"
            }
        }
    }

    package struct Decoded: Equatable {
        package var bytes: [UInt8]
        /// The input ended before its coding did (a body kept cut), or the output reached the
        /// limit: what is there is the start of the body.
        package var truncated: Bool
    }

    /// `codings` as the `Content-Encoding` field lists them, comma-separated, in the order applied.
    package static func decode(_ bytes: [UInt8], codings: [String], limit: Int) -> Result<Decoded, Failure> {
        var current = Decoded(bytes: bytes, truncated: false)
        for coding in codings.reversed() {
            let name = coding.lowercased()
            let step: Result<Decoded, Failure>
            switch name {
            case "identity", "": continue
            case "gzip", "x-gzip": step = Self.zlib(current.bytes, windowBits: 15 + 16, name: name, limit: limit)
            case "deflate":
                let wrapped = Self.zlib(current.bytes, windowBits: 15, name: name, limit: limit)
                step =
                    (try? wrapped.get()) != nil
                    ? wrapped : Self.zlib(current.bytes, windowBits: -15, name: name, limit: limit)
            case "br": step = Self.brotli(current.bytes, limit: limit)
            default: return .failure(.unknownCoding(coding))
            }
            switch step {
            case .success(let next):
                current = Decoded(bytes: next.bytes, truncated: current.truncated || next.truncated)
            case .failure(let failure): return .failure(failure)
            }
        }
        return .success(current)
    }

    private static func zlib(_ input: [UInt8], windowBits: Int32, name: String, limit: Int) -> Result<Decoded, Failure>
    {
        var stream = z_stream()
        guard inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return .failure(.corrupt(name))
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = input
        return input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                output += chunk[..<produced]
                if output.count >= limit {
                    return .success(Decoded(bytes: Array(output.prefix(limit)), truncated: true))
                }
                switch status {
                case Z_STREAM_END: return .success(Decoded(bytes: output, truncated: false))
                case Z_OK: continue
                case Z_BUF_ERROR where stream.avail_in == 0:
                    return .success(Decoded(bytes: output, truncated: true))  // the input ended early
                default:
                    return output.isEmpty ? .failure(.corrupt(name)) : .success(Decoded(bytes: output, truncated: true))
                }
            }
        }
    }

    private static func brotli(_ input: [UInt8], limit: Int) -> Result<Decoded, Failure> {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { return .failure(.corrupt("br")) }
        defer { BrotliDecoderDestroyInstance(state) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        return input.withUnsafeBufferPointer { source in
            var availableIn = source.count
            var nextIn = source.baseAddress
            while true {
                let (result, produced) = chunk.withUnsafeMutableBufferPointer { out in
                    var availableOut = out.count
                    var nextOut = out.baseAddress
                    let result = BrotliDecoderDecompressStream(
                        state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                    return (result, out.count - availableOut)
                }
                output += chunk[..<produced]
                if output.count >= limit {
                    return .success(Decoded(bytes: Array(output.prefix(limit)), truncated: true))
                }
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS: return .success(Decoded(bytes: output, truncated: false))
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: return .success(Decoded(bytes: output, truncated: true))
                default:
                    return output.isEmpty ? .failure(.corrupt("br")) : .success(Decoded(bytes: output, truncated: true))
                }
            }
        }
    }
}
