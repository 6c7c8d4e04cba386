/*
 * hl_tightest.c - which of a request's quota windows binds (see
 * hl_tightest.h).
 */
#include "hl_tightest.h"

int hl_tightest_beats(uint32_t remaining, int64_t reset_s,
                      uint32_t best_remaining, int64_t best_reset_s)
{
    return remaining < best_remaining
           || (remaining == best_remaining && reset_s > best_reset_s);
}
