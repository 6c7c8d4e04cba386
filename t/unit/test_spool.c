/* hl_spool: HotLimitSpoolLimit's account: charges fit under the limit or
 * are refused whole, give-backs never go below 0, and refusals write one
 * line a second at most, saying how many were not logged. */
#include "hl_tap.h"
#include "hl_spool.h"

int main(void)
{
    hl_spool_t s = { 0, 100, 0, 0, 0 };
    uint64_t skipped = 99;

    is_int(hl_spool_charge(&s, 60), 1, "60 of 100: charged");
    is_int(hl_spool_charge(&s, 41), 0, "41 more: over the limit, refused");
    is_int((int)s.bytes, 60, "a refused charge adds nothing");
    is_int(hl_spool_charge(&s, 40), 1, "40 more: exactly the limit, charged");
    is_int(hl_spool_charge(&s, 1), 0, "1 more: refused");
    hl_spool_give(&s, 60);
    is_int((int)s.bytes, 40, "60 given back");
    is_int(hl_spool_charge(&s, 60), 1, "then 60 fit again");
    hl_spool_give(&s, 500);
    is_int((int)s.bytes, 0, "giving back more than charged stops at 0");
    is_int(hl_spool_charge(&s, INT64_MAX), 0, "a huge charge is refused, no overflow");

    is_int(hl_spool_refused(&s, 5000, &skipped), 1, "first refusal: logged");
    is_int((int)skipped, 0, "nothing skipped before it");
    is_int(hl_spool_refused(&s, 5100, &skipped), 0, "second within the second: not logged");
    is_int(hl_spool_refused(&s, 5999, &skipped), 0, "third: not logged");
    is_int(hl_spool_refused(&s, 6000, &skipped), 1, "a second later: logged");
    is_int((int)skipped, 2, "saying 2 were not logged");
    is_int(hl_spool_refused(&s, 10, &skipped), 1, "a clock gone back: logged");
    is_int((int)s.refused, 5, "every refusal counted");
    return done_testing();
}
