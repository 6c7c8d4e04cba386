/*
 * hl_delay.c - how long delay= holds an admitted request: see hl_delay.h.
 */
#include "hl_delay.h"

int64_t hl_delay_ms(const hl_quota_t *q, const hl_decision_t *d)
{
    int64_t most = 0;
    int i;

    if (!q->has_delay || q->algo != HL_ALGO_GCRA || !d->admit)
        return 0;
    for (i = 0; i < q->nwindows && i < d->nwindows && i < HL_MAX_WINDOWS; ++i) {
        int64_t count = q->windows[i].count ? q->windows[i].count : 1;
        /* As the bucket: ceil(window * 1000 / count) microseconds. */
        int64_t interval = ((int64_t)q->windows[i].window_ms * 1000 + count - 1)
                           / count;
        int64_t held = d->windows[i].reset_ms * 1000 - interval
                       - (int64_t)q->delay * interval;
        if (held > most)
            most = held;
    }
    return (most + 999) / 1000;
}
