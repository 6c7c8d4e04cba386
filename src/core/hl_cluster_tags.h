/*
 * hl_cluster_tags.h - the 1024 bucket tags that spread counters over a
 * Redis Cluster. A client key goes to bucket B = (its keyed hash) mod
 * 1024; every key of that bucket carries the hash tag of B, so one
 * client's keys of one quota line share a slot (one script decides them),
 * and the buckets' slots are spread evenly: bucket B's tag hashes to slot
 * 16 x B exactly, so any split of the slots into contiguous ranges (as
 * redis-cli --cluster create and reshard make) gives each master its
 * share of buckets within one.
 *
 * A tag is "hl:" B "." S, S the first of the strings over [0-9a-z] in
 * length-then-alphabetical order that makes CRC16 land on slot 16 x B
 * (hl_cluster_tag_search). The table is compiled in
 * (hl_cluster_tags_table.h, written by t/support/cluster_tags_gen.c) so
 * every server agrees; t/unit/test_cluster.c searches every tag again and
 * checks the table against it. Never change a tag: counters live under it.
 */
#ifndef HL_CLUSTER_TAGS_H
#define HL_CLUSTER_TAGS_H

#include <stddef.h>
#include <stdint.h>

#define HL_CLUSTER_BUCKETS    1024
#define HL_CLUSTER_TAG_MAX    16     /* "hl:1023.zzzz" and its NUL */
#define HL_CLUSTER_TAG_SUFFIX 4      /* the longest S searched */

/* Returns bucket's tag (NUL-terminated, without braces, static), or NULL
 * when bucket >= HL_CLUSTER_BUCKETS. */
const char *hl_cluster_bucket_tag(unsigned bucket);

/* Returns the bucket (0..1023) of a client key from its keyed hash (the
 * SipHash of the client part under the server's secret, so nobody
 * without it can aim many keys at one master). Never fails. */
unsigned hl_cluster_bucket(uint64_t keyed_hash);

/*
 * Writes into out (size bytes) the tag of bucket as the table holds it:
 * "hl:" bucket "." and the first suffix (1..HL_CLUSTER_TAG_SUFFIX bytes of
 * [0-9a-z], shortest first) whose CRC16 slot is 16 x bucket. Returns the
 * tag's length, or -1 when bucket >= HL_CLUSTER_BUCKETS, out is too small
 * (HL_CLUSTER_TAG_MAX suffices) or no suffix is found. Slow (up to 1.7
 * million CRCs): for the generator and the unit test, not for requests.
 */
int hl_cluster_tag_search(unsigned bucket, char *out, size_t size);

#endif
