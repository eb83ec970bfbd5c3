#ifndef R2UP_COPENSSL_SHIM_H
#define R2UP_COPENSSL_SHIM_H
// libcrypto only: SHA-256, HMAC and MD5 through the EVP interface, and its initialisation.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/crypto.h>

// Keeps libcrypto's exit-time cleanup from running: called before anything else initialises
// OpenSSL (the first initialisation decides). Returns 1 on success.
static inline int r2_openssl_no_atexit(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}
#endif
