/*
 * libxcrypt (Debian's libcrypt1, what shadow and PAM use) for checking `proxy-auth-file`
 * hashes: yescrypt, bcrypt, sha512crypt and the rest of crypt(5), maintained by the system
 * rather than written here. crypt_rn is not variadic, so this only includes; AFProxyStore is
 * its only user.
 */
#ifndef AFPROXY_CCRYPT_SHIM_H
#define AFPROXY_CCRYPT_SHIM_H

#include <crypt.h>

#endif
