/*
 * hl_cidr.h - client addresses: parsing IPs and CIDR blocks, matching, and
 * the client key of an address (IPv6 grouped by a prefix). Pure and
 * pointer-free, so exempt lists can live in shared memory.
 */
#ifndef HL_CIDR_H
#define HL_CIDR_H

#include <stddef.h>
#include <stdint.h>

#define HL_IP_KEY_MAX 48   /* "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128" + NUL */

typedef struct {
    uint8_t family;     /* 4 or 6; 0 = invalid */
    uint8_t bits;       /* prefix length: 0..32 or 0..128 */
    uint8_t addr[16];   /* network bytes, masked to bits (4 used for IPv4) */
} hl_cidr_t;

/*
 * Parses an address into *ip as a /32 or /128 block. IPv4-mapped IPv6
 * ("::ffff:192.0.2.1") becomes IPv4. Returns 0, or -1 if not an address.
 */
int hl_ip_parse(const char *text, hl_cidr_t *ip);

/*
 * Parses "192.0.2.0/24", "2001:db8::/32" or a bare address. Host bits set
 * beyond the prefix are masked off. Returns 0, or -1 (bad address, prefix
 * out of range, trailing garbage).
 */
int hl_cidr_parse(const char *text, hl_cidr_t *out);

/* Returns 1 if address ip (from hl_ip_parse) lies in block c, else 0. */
int hl_cidr_match(const hl_cidr_t *c, const hl_cidr_t *ip);

/*
 * Writes the client key of address text into out (HL_IP_KEY_MAX bytes):
 * IPv4 as is ("203.0.113.7"); IPv6 masked to v6_prefix bits (1..128) with
 * the prefix appended ("2001:db8:1:2::/64"; /128 prints the bare address).
 * An unparsable text is copied as is (cut to fit). Returns the length.
 */
size_t hl_client_key(char *out, const char *ip_text, int v6_prefix);

/*
 * The same for an address already parsed by hl_ip_parse (no second parse):
 * IPv4 as a dotted quad, IPv6 masked and suffixed as above. Writes into out
 * (HL_IP_KEY_MAX bytes) and returns the length.
 */
size_t hl_client_key_of(char *out, const hl_cidr_t *ip, int v6_prefix);

/*
 * Both at once, for a request's client: sets *ip as hl_ip_parse(ip_text,
 * ip) does (family 0 when ip_text is not an address) and writes into out
 * (HL_IP_KEY_MAX bytes) the key hl_client_key(out, ip_text, v6_prefix)
 * writes; returns its length. A dotted quad is parsed without inet_pton
 * and is its own key. Never fails.
 */
size_t hl_client_parse(char *out, const char *ip_text, int v6_prefix,
                       hl_cidr_t *ip);

#endif
