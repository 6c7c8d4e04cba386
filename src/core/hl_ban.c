/*
 * hl_ban.c - the two hidden quotas of HotLimitBan (see hl_ban.h): parsing
 * and recognising the ban counters among the slots (by their key's
 * layout, which hl_slotkey.c decodes).
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

int hl_ban_key_client(const char *key, size_t len, const char **client,
                      size_t *client_len)
{
    hl_slotkey_t k;

    if (hl_slotkey_decode(key, len, &k) != 0 || k.kind != HL_SLOTKEY_BAN
        || k.client_len == 0)
        return 0;
    *client = k.client;
    *client_len = k.client_len;
    return 1;
}

int hl_ban_key_is_counter(const char *key, size_t len)
{
    return hl_slotkey_is_ban_counter(key, len);
}
