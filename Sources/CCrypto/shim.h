/*
 * OpenSSL's libcrypto, for the SHA-256 of a downloaded file.
 *
 * Why this and not swift-crypto: libcrypto is already in the process (libcurl's TLS links it),
 * while swift-crypto compiles its own BoringSSL in every build CI makes (debug, sanitizers,
 * fuzzing). The EVP digest calls are not variadic, so this only includes; AFProxyStore is its
 * only user.
 */
#ifndef AFPROXY_CCRYPTO_SHIM_H
#define AFPROXY_CCRYPTO_SHIM_H

#include <openssl/evp.h>

#endif
