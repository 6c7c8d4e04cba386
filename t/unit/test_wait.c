/* hl_wait: the lines of requests held instead of refused: order, bounds
 * per key and for the whole server, leaving, dead holders. */
#include "hl_tap.h"
#include "hl_wait.h"

static int dead_pid = -1;

static int alive(int32_t pid, uint64_t start, void *ctx)
{
    (void)start;
    (void)ctx;
    return pid != dead_pid;
}

static hl_wait_table_t t;

int main(void)
{
    hl_conc_holder_t a = { 100, 1 }, b = { 200, 1 };
    uint64_t s1, s2, s3, s4, h;
    int why;

    s1 = hl_wait_join(&t, 5, &a, 2, 4, &why);
    s2 = hl_wait_join(&t, 5, &b, 2, 4, &why);
    ok(s1 > 0 && s2 > s1, "two join key 5 in order");
    is_int((int)hl_wait_join(&t, 5, &a, 2, 4, &why), 0, "the third of a line of 2: no");
    is_int(why, HL_WAIT_LINE_FULL, "... line full");
    is_int((int)hl_wait_ahead(&t, 5, s1), 0, "first: none ahead");
    is_int((int)hl_wait_ahead(&t, 5, s2), 1, "second: one ahead");
    s3 = hl_wait_join(&t, 7, &a, 2, 4, &why);
    is_int((int)hl_wait_ahead(&t, 7, s3), 0, "another key has its own line");
    h = hl_wait_join(&t, HL_WAIT_HOLD, &a, 0, 4, &why);
    ok(h > 0, "a hold joins (no line bound)");
    is_int((int)hl_wait_join(&t, HL_WAIT_HOLD, &a, 0, 4, &why), 0,
           "the server's total (4) reached: no");
    is_int(why, HL_WAIT_SERVER_FULL, "... server full");
    is_int(hl_wait_leave(&t, s1), 1, "the first leaves (client gone)");
    is_int(hl_wait_leave(&t, s1), 0, "leaving twice: nothing");
    is_int((int)hl_wait_ahead(&t, 5, s2), 0, "the second is first now");
    s4 = hl_wait_join(&t, 5, &a, 2, 4, &why);
    ok(s4 > s2, "a newcomer goes to the end of the line");
    is_int((int)hl_wait_ahead(&t, 5, s4), 1, "... behind the second");
    dead_pid = 200;
    is_int((int)hl_wait_reap(&t, alive, NULL), 1, "a dead holder's waiter is reaped");
    is_int((int)hl_wait_ahead(&t, 5, s4), 0, "... and no longer blocks the line");
    is_int((int)hl_wait_count(&t, 5), 1, "key 5: one waits");
    is_int((int)t.used, 3, "three records in use");
    return done_testing();
}
