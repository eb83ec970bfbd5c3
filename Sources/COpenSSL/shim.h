#ifndef R2UP_COPENSSL_SHIM_H
#define R2UP_COPENSSL_SHIM_H
// libcrypto only: SHA-256, HMAC and MD5 through the EVP interface.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#endif
