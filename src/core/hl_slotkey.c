/*
 * hl_slotkey.c - writes and reads a counter's key text (the layout is
 * described in hl_slotkey.h, its one definition).
 */
#include <string.h>
#include "hl_hash.h"
#include "hl_slots.h"
#include "hl_slotkey.h"

size_t hl_key_compact(char out[HL_KEY_MAX], const char *key, size_t len)
{
    const size_t keep = HL_KEY_MAX - 17;

    if (len <= HL_KEY_MAX) {
        if (len > 0)
            memmove(out, key, len);
        return len;
    }
    hl_hash_hex16(out + keep + 1, hl_hash64(key, len, HL_SEED_KEYS));
    memmove(out, key, keep);
    out[keep] = HL_SLOTKEY_COMPACT_MARK;
    return HL_KEY_MAX;
}

size_t hl_slotkey_slot_long(char out[HL_KEY_MAX], char origin, int window,
                            const char *key, size_t keylen)
{
    char full[HL_KEY_MAX + 512];
    size_t n;

    full[HL_SLOTKEY_ORIGIN_AT] = origin;
    full[HL_SLOTKEY_WINDOW_AT] = (char)('0' + window);
    if (keylen > sizeof(full) - HL_SLOTKEY_PREFIX) {
        /* Very long keys: compact the key itself first, then prefix it. */
        char compact[HL_KEY_MAX];
        size_t clen = hl_key_compact(compact, key, keylen);
        memcpy(full + HL_SLOTKEY_PREFIX, compact, clen);
        n = HL_SLOTKEY_PREFIX + clen;
    }
    else {
        memcpy(full + HL_SLOTKEY_PREFIX, key, keylen);
        n = HL_SLOTKEY_PREFIX + keylen;
    }
    return hl_key_compact(out, full, n);
}

int hl_slotkey_is_bare(const char *key, size_t len)
{
    return memchr(key, HL_SLOTKEY_SEP, len) == NULL;
}

size_t hl_slotkey_encode(char *out, size_t size, const char *tag,
                         size_t tag_len, const char *scope, size_t scope_len,
                         const char *client, size_t client_len)
{
    size_t len = tag_len + scope_len + 1 + client_len;

    if (out && len < size) {
        memcpy(out, tag, tag_len);
        memcpy(out + tag_len, scope, scope_len);
        out[tag_len + scope_len] = HL_SLOTKEY_SEP;
        memcpy(out + tag_len + scope_len + 1, client, client_len);
        out[len] = '\0';
    }
    return len;
}

/* Returns 1 if s (len bytes) is a virtual host's tag: no byte of
 * HL_SLOTKEY_TAG_NOT, ending with ':' and at least one digit. Else 0. */
static int is_tag(const char *s, size_t len)
{
    size_t i = len;

    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
        --i;
    if (i == len || i == 0 || s[i - 1] != HL_SLOTKEY_TAG_PORT)
        return 0;
    for (i = 0; i < len; ++i)
        if (strchr(HL_SLOTKEY_TAG_NOT, s[i]) && s[i] != '\0')
            return 0;
    return 1;
}

/* Returns the length of the tag before a ban's scope (scope, slen bytes)
 * that ends name (name_len bytes), or -1 when name is not TAG scope. */
static long tag_before(const char *name, size_t name_len, const char *scope,
                       size_t slen)
{
    size_t tag_len;

    if (name_len < slen || memcmp(name + name_len - slen, scope, slen) != 0)
        return -1;
    tag_len = name_len - slen;
    return tag_len == 0 || is_tag(name, tag_len) ? (long)tag_len : -1;
}

/* Returns 1 if the slot key of user-visible length len ends as
 * hl_key_compact leaves a long key: '~' then 16 lowercase hex digits, the
 * slot key HL_KEY_MAX bytes long. */
static int is_compacted(const char *key, size_t len)
{
    size_t i;

    if (len + HL_SLOTKEY_PREFIX != HL_KEY_MAX || len < 17
        || key[len - 17] != HL_SLOTKEY_COMPACT_MARK)
        return 0;
    for (i = len - 16; i < len; ++i)
        if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f')))
            return 0;
    return 1;
}

int hl_slotkey_decode(const char *key, size_t len, hl_slotkey_t *out)
{
    static const char ban[] = HL_SLOTKEY_BAN_SCOPE, rej[] = HL_SLOTKEY_REJ_SCOPE;
    const char *bar = len ? memchr(key, HL_SLOTKEY_SEP, len) : NULL;
    long tag;

    memset(out, 0, sizeof(*out));
    out->window = -1;
    out->key = key;
    out->key_len = len;
    if (!bar)
        return -1;
    out->name_len = (size_t)(bar - key);
    out->client = bar + 1;
    out->client_len = len - out->name_len - 1;
    out->compacted = is_compacted(key, len);
    if ((tag = tag_before(key, out->name_len, ban, sizeof(ban) - 1)) >= 0)
        out->kind = HL_SLOTKEY_BAN;
    else if ((tag = tag_before(key, out->name_len, rej, sizeof(rej) - 1)) >= 0)
        out->kind = HL_SLOTKEY_REJ;
    out->tag_len = tag > 0 ? (size_t)tag : 0;
    return 0;
}

int hl_slotkey_decode_slot(const char *skey, size_t len, hl_slotkey_t *out)
{
    char origin, w;
    int rc;

    if (len <= HL_SLOTKEY_PREFIX) {
        memset(out, 0, sizeof(*out));
        out->window = -1;
        return -1;
    }
    origin = skey[HL_SLOTKEY_ORIGIN_AT];
    w = skey[HL_SLOTKEY_WINDOW_AT];
    rc = hl_slotkey_decode(skey + HL_SLOTKEY_PREFIX, len - HL_SLOTKEY_PREFIX,
                           out);
    out->origin = origin;
    out->window = w >= '0' && w <= '9' ? w - '0' : -1;
    return rc;
}

int hl_slotkey_is_ban_slot(const char *skey, size_t len)
{
    hl_slotkey_t k;

    return hl_slotkey_decode_slot(skey, len, &k) == 0 && k.origin == HL_SLOTKEY_BAN_ORIGIN
           && k.window == 0 && k.kind == HL_SLOTKEY_BAN;
}

int hl_slotkey_is_ban_counter(const char *key, size_t len)
{
    hl_slotkey_t k;

    return hl_slotkey_decode(key, len, &k) == 0 && k.kind != HL_SLOTKEY_QUOTA
           && k.client_len > 0;
}
