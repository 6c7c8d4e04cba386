/*
 * hl_ban.c - the two hidden quotas of HotLimitBan (see hl_ban.h): parsing
 * and recognising the ban counters among the slots.
 *
 * Memory: the caller owns every buffer; nothing is allocated or kept.
 */
#include <string.h>
#include "hl_ban.h"

int hl_ban_set(hl_ban_t *b, uint32_t after, uint32_t within_ms,
               uint32_t for_ms, char *err, size_t errlen)
{
    hl_ban_t nb;

    hl_quota_init(&nb.rejections);
    nb.rejections.nwindows = 1;
    nb.rejections.windows[0].count = after;
    nb.rejections.windows[0].window_ms = within_ms;
    hl_quota_init(&nb.ban);
    nb.ban.nwindows = 1;
    nb.ban.windows[0].count = 1;
    nb.ban.windows[0].window_ms = for_ms;
    if (hl_quota_validate(&nb.rejections, err, errlen) != 0
        || hl_quota_validate(&nb.ban, err, errlen) != 0)
        return -1;
    *b = nb;
    return 0;
}

int hl_ban_parse(hl_ban_t *b, const char *rate, const char *duration,
                 char *err, size_t errlen)
{
    hl_window_t w;
    uint32_t for_ms;

    if (hl_parse_window(rate, &w, err, errlen) != 0
        || hl_parse_duration_ms(duration, 0, &for_ms, err, errlen) != 0)
        return -1;
    return hl_ban_set(b, w.count, w.window_ms, for_ms, err, errlen);
}

/* Returns 1 if key (len bytes) is the counter of scope ("ban|" or "rej|",
 * slen bytes), alone or after a virtual host's "host:port", and then sets
 * *client and *client_len to what follows it; else 0. */
static int scope_client(const char *key, size_t len, const char *scope,
                        size_t slen, const char **client, size_t *client_len)
{
    size_t at = 0;

    /* A virtual host's tag "host:port" has a ':' and no '|'. */
    if (len > slen && memcmp(key, scope, slen) != 0) {
        const char *bar = memchr(key, '|', len);
        if (bar == NULL || (size_t)(bar - key) < slen)
            return 0;
        at = (size_t)(bar - key) + 1 - slen;
        /* ... and ends with its port: "host:8080/ban|" is a Location */
        if (at == 0 || memchr(key, ':', at) == NULL
            || key[at - 1] < '0' || key[at - 1] > '9')
            return 0;
    }
    if (len <= at + slen || memcmp(key + at, scope, slen) != 0)
        return 0;
    *client = key + at + slen;
    *client_len = len - at - slen;
    return 1;
}

int hl_ban_key_client(const char *key, size_t len, const char **client,
                      size_t *client_len)
{
    static const char scope[] = HL_BAN_SCOPE "|";

    return scope_client(key, len, scope, sizeof(scope) - 1, client, client_len);
}

int hl_ban_key_is_counter(const char *key, size_t len)
{
    static const char rej[] = HL_REJ_SCOPE "|";
    const char *client;
    size_t client_len;

    return hl_ban_key_client(key, len, &client, &client_len)
           || scope_client(key, len, rej, sizeof(rej) - 1, &client, &client_len);
}
