/// The buffer a write callback decodes a chunked body into before it hands the bytes on: one for
/// the whole session rather than one per transfer, since every callback runs on the session
/// thread, one at a time. Kept per transfer it would hold up to a receive buffer's worth (16 KiB)
/// for each live chunked response, a slow one included.
final class DecodeScratch {
    var bytes: [UInt8] = []
    /// A callback is using `bytes`: one that would run inside it (a delegate that called into
    /// curl, which none does today) takes a buffer of its own instead of overwriting them.
    var inUse = false
}
