/*
 * hl_align.c - rounding for the core's memory images (see hl_align.h).
 */
#include "hl_align.h"

size_t hl_align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}
