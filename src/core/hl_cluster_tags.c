/*
 * hl_cluster_tags.c - the bucket tags of a Redis Cluster store (see
 * hl_cluster_tags.h).
 */
#include "hl_cluster_tags.h"
#include "hl_cluster.h"

#include <stdio.h>
#include <string.h>

static const char *const tags[HL_CLUSTER_BUCKETS] = {
#include "hl_cluster_tags_table.h"
};

const char *hl_cluster_bucket_tag(unsigned bucket)
{
    return bucket < HL_CLUSTER_BUCKETS ? tags[bucket] : NULL;
}

unsigned hl_cluster_bucket(uint64_t keyed_hash)
{
    return (unsigned)(keyed_hash % HL_CLUSTER_BUCKETS);
}

int hl_cluster_tag_search(unsigned bucket, char *out, size_t size)
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    const unsigned base = sizeof(alphabet) - 1;
    unsigned want = bucket * (HL_CLUSTER_SLOTS / HL_CLUSTER_BUCKETS);
    int head, n, i;

    if (bucket >= HL_CLUSTER_BUCKETS || size < HL_CLUSTER_TAG_MAX)
        return -1;
    head = snprintf(out, size, "hl:%u.", bucket);
    for (n = 1; n <= HL_CLUSTER_TAG_SUFFIX; ++n) {
        unsigned long count = 1, k, v;

        for (i = 0; i < n; ++i)
            count *= base;
        for (k = 0; k < count; ++k) {
            for (v = k, i = n - 1; i >= 0; --i, v /= base)
                out[head + i] = alphabet[v % base];
            out[head + n] = '\0';
            if ((hl_cluster_crc16(out, (size_t)(head + n))
                 & (HL_CLUSTER_SLOTS - 1)) == want)
                return head + n;
        }
    }
    out[0] = '\0';
    return -1;
}
