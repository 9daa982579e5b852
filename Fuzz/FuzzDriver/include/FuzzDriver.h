#ifndef AFPROXY_FUZZ_DRIVER_H
#define AFPROXY_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs with a main of their own (libclang_rt.fuzzer_no_main):
/// the fuzz targets call it from the one build that also serves the AddressSanitizer suite
/// (scripts/sanitize), where libFuzzer's own main would clash with the daemon's. Declared here
/// because Swift cannot declare a C function; only that build links its definition.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
