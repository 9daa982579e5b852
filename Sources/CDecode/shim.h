// zlib (gzip, deflate) and brotli's decoder, for showing recorded bodies decoded
// (AFProxyStore's ContentDecoder, their only user). Both are what libcurl itself links for the
// same codings; Swift has no decoder of its own on Linux (Foundation's is Apple-only).
#include <zlib.h>
#include <brotli/decode.h>
