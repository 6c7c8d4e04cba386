/*
 * hl_siphash.h - SipHash-2-4 (Aumasson and Bernstein, 2012): the keyed
 * 64-bit hash of client-sent key values (by=header:, cookie:, param:,
 * json:, user, env:), so that nobody without the server's secret can
 * precompute two values sharing a counter. Pure: no allocation, no APR,
 * no httpd.
 */
#ifndef HL_SIPHASH_H
#define HL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define HL_SIPHASH_KEY_BYTES 16

/* A SipHash key: the 16 key bytes read as two little-endian words. */
typedef struct {
    uint64_t k0, k1;
} hl_siphash_key_t;

/* Sets *k from the HL_SIPHASH_KEY_BYTES bytes at bytes. Never fails. */
void hl_siphash_key(hl_siphash_key_t *k, const unsigned char *bytes);

/*
 * Returns SipHash-2-4 under key k of the len bytes at data (data may be
 * NULL when len is 0), as the reference implementation's 8 output bytes
 * read little-endian. Never fails; reads only.
 */
uint64_t hl_siphash24(const hl_siphash_key_t *k, const void *data, size_t len);

#endif
