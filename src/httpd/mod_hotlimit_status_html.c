/*
 * mod_hotlimit_status_html.c - the status page as HTML, for an operator:
 * a section per function, each formatting a full snapshot
 * (mod_hotlimit_status_snap.h) and gathering nothing itself.
 *
 * The page: a summary line (refusals per second, bans, the table's
 * state, the store's health, slot fill, evictions per second); the keys
 * refused most now, an account key with its name (HotLimitStatusNames); every configured route (HotLimitQuota
 * lines and the published table's rules) with its limits from the start,
 * its counts and an inline SVG chart of the last five minutes drawn here
 * (a time axis, value ticks, grouped digits; no script, no external
 * asset); the keys at their limit now, each with a
 * reset button (a same-origin form POST, answered with a 303 back to the
 * page); bans; the account lookup; the table; store health; the busiest
 * keys; uptime.
 */
#include <string.h>

#include "httpd.h"
#include "http_protocol.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_status_html.h"
#include "hl_fmt.h"
#include "hl_render.h"
#include "hl_clock.h"

const char *hl_status_duration(apr_pool_t *p, int64_t secs)
{
    int64_t d, h, m;

    if (secs < 0)
        secs = 0;
    d = secs / 86400;
    h = secs / 3600 % 24;
    m = secs / 60 % 60;
    secs %= 60;
    if (d)
        return apr_psprintf(p, "%" APR_INT64_T_FMT " d %" APR_INT64_T_FMT
                            " h %" APR_INT64_T_FMT " min", (apr_int64_t)d,
                            (apr_int64_t)h, (apr_int64_t)m);
    if (h)
        return apr_psprintf(p, "%" APR_INT64_T_FMT " h %" APR_INT64_T_FMT
                            " min", (apr_int64_t)h, (apr_int64_t)m);
    if (m)
        return apr_psprintf(p, "%" APR_INT64_T_FMT " min %" APR_INT64_T_FMT
                            " s", (apr_int64_t)m, (apr_int64_t)secs);
    return apr_psprintf(p, "%" APR_INT64_T_FMT " s", (apr_int64_t)secs);
}

const char *hl_status_grouped(apr_pool_t *p, uint64_t v)
{
    char out[HL_FMT_GROUPED_MAX];

    hl_fmt_grouped(out, v);
    return apr_pstrdup(p, out);
}

/* Returns 16 * log2(1 + n), its fraction by linear interpolation between
 * powers of two (integers only: no libm in the module). */
static uint64_t log2_16(uint64_t n)
{
    uint64_t x = n + 1;
    int b;

    if (n == UINT64_MAX)
        return 64 * 16;
    b = 63 - __builtin_clzll(x);
    return (uint64_t)b * 16 + (b >= 4 ? (x >> (b - 4)) - 16
                                      : (x << (4 - b)) - 16);
}

/* Returns the requests refused in one tick of a chart (t: by
 * hl_decision_kind_t): by a quota, or because their client was banned. */
static uint64_t refused_in(const uint32_t *t)
{
    return (uint64_t)t[HL_DECISION_REJECTED] + t[HL_DECISION_BANNED];
}

/* Returns the height in pixels of a bar of n on a log scale where max
 * (>= n) fills full: log(1 + n) / log(1 + max) of it, at least 1 for n > 0
 * (one admitted request stays visible next to a flood). */
static int log_height(uint64_t n, uint64_t max, int full)
{
    uint64_t ln = log2_16(n), lmax = log2_16(max);
    int h;

    if (!n || !lmax)
        return 0;
    h = (int)((ln * (uint64_t)full + lmax / 2) / lmax);
    return h < 1 ? 1 : h > full ? full : h;
}

/* Writes the value axis of a chart whose scale tops at max (log scale,
 * half px a side of the line at y = axis, left margin left): a tick and a
 * grouped label at 1 and at powers of ten up to max (at most three a
 * side), and max itself at both ends; admitted above, refused below. */
static void chart_value_axis(request_rec *r, uint64_t max, int half, int axis,
                             int left)
{
    uint64_t v, step = 1;
    int decades = 0, e, side;

    for (v = max; v >= 10; v /= 10)
        ++decades;
    /* 1, 10, 100 ... or, over three decades, every second or third one:
     * at most about three labels a side. */
    for (e = decades <= 3 ? 1 : (decades + 2) / 3; e > 0; --e)
        step *= 10;
    for (side = -1; side <= 1; side += 2)
        for (v = step; v * 3 <= max; v = v > max / step ? max : v * step) {
            int y = axis + side * log_height(v, max, half);
            ap_rprintf(r, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                       "stroke=\"#bbb\"/><text class=\"tick\" x=\"%d\" "
                       "y=\"%d\" font-size=\"9\" text-anchor=\"end\">%s"
                       "</text>", left - 3, y, left, y, left - 4, y + 3,
                       hl_status_grouped(r->pool, v));
        }
    ap_rprintf(r, "<text class=\"tick max\" x=\"%d\" y=\"9\" "
               "font-size=\"9\" text-anchor=\"end\">%s</text>"
               "<text class=\"tick max\" x=\"%d\" y=\"%d\" font-size=\"9\" "
               "text-anchor=\"end\">%s</text><text class=\"tick\" x=\"%d\" "
               "y=\"%d\" font-size=\"9\" text-anchor=\"end\">0</text>",
               left - 4, hl_status_grouped(r->pool, max), left - 4, 2 * axis - 1,
               hl_status_grouped(r->pool, max), left - 4, axis + 3);
}

/* Writes the time axis of a chart (bars of bar px from x = left, the last
 * ending now) at y: a tick and label each minute, "N min ago" at the
 * oldest, "now" at the right end. */
static void chart_time_axis(request_rec *r, int bar, int left, int y)
{
    const int per_min = 60000 / HL_STATS_TICK_MS;
    const int minutes = HL_STATS_HISTORY / per_min;
    const int right = left + bar * HL_STATS_HISTORY;
    int m;

    ap_rprintf(r, "<g class=\"time-axis\"><line x1=\"%d\" y1=\"%d\" "
               "x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>", left, y, right, y);
    for (m = minutes; m >= 0; --m) {
        int x = right - m * per_min * bar;
        ap_rprintf(r, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                   "stroke=\"#888\"/><text x=\"%d\" y=\"%d\" "
                   "font-size=\"9\" text-anchor=\"%s\">%s</text>", x, y, x,
                   y + 3, x, y + 12, m == minutes ? "start"
                                     : m == 0 ? "end" : "middle",
                   m == minutes ? apr_psprintf(r->pool, "%d min ago", m)
                   : m == 0 ? "now" : apr_psprintf(r->pool, "-%d", m));
    }
    ap_rputs("</g>", r);
}

/* Writes the chart of the last HL_STATS_HISTORY ticks of history (NULL:
 * no traffic yet) as inline SVG, readable when refusals dwarf admissions:
 * admitted requests rise above the line, refused ones (dry run stacked on
 * them) hang below it, both on one log scale with ticks and grouped
 * labels on the value axis, a time axis (minutes ago to now) below; then
 * the totals of the period in words. */
static void html_chart(request_rec *r,
                       const uint32_t (*history)[HL_DECISION_KINDS])
{
    static const uint32_t none[HL_STATS_HISTORY][HL_DECISION_KINDS];
    const uint32_t (*h)[HL_DECISION_KINDS] = history ? history : none;
    apr_pool_t *p = r->pool;
    uint64_t max = 0, sum[3] = { 0, 0, 0 };
    const int bar = 9, half = 40, axis = half + 2, left = 48;
    const int width = left + bar * HL_STATS_HISTORY + 4, height = 2 * axis + 16;
    const int minutes = HL_STATS_HISTORY * HL_STATS_TICK_MS / 60000;
    int i, k;

    for (i = 0; i < HL_STATS_HISTORY; ++i) {
        uint64_t down = refused_in(h[i]) + h[i][HL_DECISION_DRY_RUN];
        if (h[i][HL_DECISION_ADMITTED] > max)
            max = h[i][HL_DECISION_ADMITTED];
        if (down > max)
            max = down;
        for (k = 0; k < 3; ++k)
            sum[k] += k == HL_DECISION_REJECTED ? refused_in(h[i]) : h[i][k];
    }
    ap_rprintf(r, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
               "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-label=\"last %d min: %s admitted, %s rejected, %s dry run\">"
               "<title>last %d min (bars of %d s, log scale; admitted above "
               "the line, refused below): %s admitted, %s rejected, %s dry run"
               "</title><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
               "stroke=\"#888\"/><line x1=\"%d\" y1=\"0\" x2=\"%d\" "
               "y2=\"%d\" stroke=\"#888\"/>",
               width, height, width, height, minutes,
               hl_status_grouped(p, sum[0]), hl_status_grouped(p, sum[1]),
               hl_status_grouped(p, sum[2]), minutes, HL_STATS_TICK_MS / 1000,
               hl_status_grouped(p, sum[0]), hl_status_grouped(p, sum[1]),
               hl_status_grouped(p, sum[2]), left, axis,
               left + bar * HL_STATS_HISTORY, axis, left, left, 2 * axis);
    if (max)
        chart_value_axis(r, max, half, axis, left);
    chart_time_axis(r, bar, left, 2 * axis + 1);
    for (i = 0; max && i < HL_STATS_HISTORY; ++i) {
        uint32_t ok = h[i][HL_DECISION_ADMITTED];
        uint64_t down = refused_in(h[i]) + h[i][HL_DECISION_DRY_RUN];
        int up_h = log_height(ok, max, half), down_h = log_height(down, max, half);
        int dry_h = down ? (int)((uint64_t)down_h * h[i][HL_DECISION_DRY_RUN]
                                 / down) : 0;
        int x = left + i * bar;
        if (up_h)
            ap_rprintf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "fill=\"#3a3\"/>", x, axis - up_h, bar - 1, up_h);
        if (down_h - dry_h > 0)
            ap_rprintf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "fill=\"#d22\"/>", x, axis + 1, bar - 1,
                       down_h - dry_h);
        if (dry_h > 0)
            ap_rprintf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "fill=\"#e90\"/>", x, axis + 1 + down_h - dry_h,
                       bar - 1, dry_h);
    }
    ap_rprintf(r, "</svg><span class=\"totals\">%s admitted, %s refused, %s "
               "dry run in %d min</span>", hl_status_grouped(p, sum[0]),
               hl_status_grouped(p, sum[1]), hl_status_grouped(p, sum[2]),
               minutes);
}

/* Writes one row of the routes table (no stats: no traffic yet): the
 * rule (FILE:LINE or table route), where it comes from, the requests it
 * admitted, those it refused itself, those another quota of the request
 * refused, those refused because the client was banned, and its chart. */
static void html_route(request_rec *r, const hl_page_route_t *row)
{
    apr_pool_t *p = r->pool;
    const hl_route_stat_t *e = row->stat;
    const char *rule = row->rule, *limits = row->limits;
    const char *origin = !strcmp(row->origin, "table") ? "quota table"
                         : !strcmp(row->origin, "directive") ? "HotLimitQuota"
                         : "";
    uint64_t by = e ? e->count[HL_DECISION_REJECTED] : 0;

    ap_rprintf(r, "<tr class=\"route\"><td class=\"name\">%s</td>"
               "<td class=\"rule\">%s</td>"
               "<td class=\"limits\">%s</td><td>%s</td><td class=\"num\">%"
               APR_UINT64_T_FMT "</td><td class=\"num refused\">%"
               APR_UINT64_T_FMT "</td><td class=\"num\">%" APR_UINT64_T_FMT
               "</td><td class=\"num banned\">%" APR_UINT64_T_FMT
               "</td><td class=\"num\">%" APR_UINT64_T_FMT "</td><td>",
               hl_html_escape(p, row->name),
               *rule ? hl_html_escape(p, rule) : "&mdash;",
               *limits ? hl_html_escape(p, limits) : "&mdash;",
               *origin ? origin : "not configured here",
               (apr_uint64_t)(e ? e->count[0] : 0), (apr_uint64_t)by,
               (apr_uint64_t)(e ? e->refused_other : 0),
               (apr_uint64_t)(e ? e->count[HL_DECISION_BANNED] : 0),
               (apr_uint64_t)(e ? e->count[2] : 0));
    html_chart(r, row->history);
    ap_rputs("</td></tr>", r);
}

/* Writes where the keys at their limit were listed from, with the Redis
 * store (nothing with the shm store). */
static void html_limited_from(request_rec *r, int from)
{
    if (from == HL_LIMITED_FROM_REDIS)
        ap_rputs("<p id=\"limited-from\">Listed from the Redis store: the "
                 "keys at their limit on every server that shares it.</p>", r);
    else if (from == HL_LIMITED_FROM_FALLBACK)
        ap_rputs("<p id=\"limited-from\" class=\"warn\">The Redis store is "
                 "not answering: listed from this server's own counters (its "
                 "fallback while Redis is down).</p>", r);
}

/* Returns the cells of ban e: its client address, then its virtual host
 * ("all hosts" for the main server's), escaped, allocated from p. */
static const char *html_ban_cells(apr_pool_t *p, const hl_ban_entry_t *e)
{
    return apr_psprintf(p, "<td class=\"client key\">%s</td><td class=\"host\">"
                        "%s</td>", hl_html_escape(p, e->client),
                        *e->host ? hl_html_escape(p, e->host) : "all hosts");
}

/* Returns the cell text of an account's name (HotLimitStatusNames): " "
 * and the name in a span, escaped; "" without one. From p. */
static const char *html_name(apr_pool_t *p, const char *name)
{
    return name ? apr_pstrcat(p, " <span class=\"name\" title=\"the value "
                              "the client sent (HotLimitStatusNames)\">&ldquo;",
                              hl_html_escape(p, name), "&rdquo;</span>", NULL)
                : "";
}

/* Writes the store's health and the slots' fill on the line at the top:
 * "store up" (or "store down (breaker open)" in red for a remote store
 * that does not answer), slots used/capacity (%, in red from 90 %),
 * evictions per second (in red when not 0). */
static void html_summary_store(request_rec *r, const hl_snapshot_t *snap)
{
    const hl_store_figures_t *f = &snap->store;
    int down = f->configured && !f->up;

    ap_rprintf(r, " &middot; <span id=\"store-health\"%s>%s</span> &middot; "
               "<span id=\"slot-fill\"%s>slots %s/%s (%d%%)</span> &middot; "
               "<span id=\"evictions-rate\"%s>%s evictions/s</span>",
               down ? " class=\"warn\"" : "",
               !f->configured ? "store up (shared memory)"
               : down ? "<b>store down</b> (Redis breaker open: deciding by "
                        "HotLimitStoreFailure)" : "store up (Redis)",
               snap->slots_pct >= 90 ? " class=\"warn\"" : "",
               hl_status_grouped(r->pool, snap->used),
               hl_status_grouped(r->pool, snap->capacity), snap->slots_pct,
               strcmp(snap->eviction_rate, "0.0") ? " class=\"warn\"" : "",
               snap->eviction_rate);
}

/* Writes the line at the top: refusals per second now, active bans, the
 * table's state (red, with its message, when its last reload failed),
 * then the store's health, slot fill and evictions per second. */
static void html_summary(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    int bans = snap->bans->nelts;
    int failed = snap->table.table_last_result == HL_RELOAD_FAILED;

    ap_rprintf(r, "<p id=\"summary\"><span id=\"rate\"%s>%s refusals/s "
               "now</span> &middot; <span id=\"bans-active\">%d active "
               "ban%s</span> &middot; ",
               snap->refused_recent ? " class=\"warn\"" : "",
               snap->refusal_rate, bans, bans == 1 ? "" : "s");
    if (!snap->table.table_source[0])
        ap_rputs("<span id=\"table-state\">no quota table</span>", r);
    else if (failed)
        ap_rprintf(r, "<span id=\"table-state\" class=\"warn\"><b>quota "
                   "table: last reload FAILED</b>: %s (generation %"
                   APR_UINT64_T_FMT " stays in force)</span>",
                   hl_html_escape(p, snap->table.table_message),
                   (apr_uint64_t)snap->table.table_generation);
    else
        ap_rprintf(r, "<span id=\"table-state\">quota table %s, generation %"
                   APR_UINT64_T_FMT "</span>", snap->sum.table_result,
                   (apr_uint64_t)snap->table.table_generation);
    html_summary_store(r, snap);
    ap_rputs("</p>", r);
}

/* Writes "Refused most (now)": the keys with the most refusals in this
 * minute and the one before, the route and rule that refused them, each
 * with a reset button (form posting to self). */
static void html_refused(request_rec *r, const hl_snapshot_t *snap,
                         const char *self)
{
    apr_pool_t *p = r->pool;
    int i;

    ap_rputs("<h2>Refused most (now)</h2>", r);
    if (snap->refused_servers)
        ap_rprintf(r, "<p id=\"refused-servers\">Summed over %d servers "
                   "sharing the Redis store.</p>", snap->refused_servers + 1);
    if (!snap->nrefused) {
        ap_rputs("<p id=\"refused-none\">No refusals in the last minutes.</p>",
                 r);
        return;
    }
    ap_rputs("<table id=\"refused\"><tr><th>client</th><th>key</th>"
             "<th>refused by route</th><th>rule</th><th>refusals now (this "
             "minute and the last)</th><th>refusals in all</th><th></th></tr>",
             r);
    for (i = 0; i < snap->nrefused; ++i) {
        const hl_refused_row_t *row = &snap->refused_rows[i];
        const hl_refusal_rank_t *k = row->rank;
        const char *key = hl_html_escape(p, k->key);

        ap_rprintf(r, "<tr class=\"refused%s\"><td class=\"client key\">%s%s</td>"
                   "<td class=\"key\">%s</td><td>%s</td><td class=\"rule\">%s"
                   "</td><td class=\"num\">%u</td><td class=\"num\">%"
                   APR_UINT64_T_FMT "</td><td><form class=\"reset\" "
                   "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                   "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                   "name=\"back\" value=\"1\"><button type=\"submit\">"
                   "reset</button></form></td></tr>", i ? "" : " first",
                   hl_html_escape(p, row->shown), html_name(p, row->name),
                   key, hl_html_escape(p, k->route), hl_html_escape(p, row->rule),
                   k->now,
                   (apr_uint64_t)k->total, self, key);
    }
    ap_rputs("</table>", r);
}

/* Writes the account lookup: a GET form (works without script) and, for
 * ?lookup=NAME, the counters of that account's keys with reset buttons. */
static void html_lookup(request_rec *r, const hl_snapshot_t *snap,
                        const char *self)
{
    apr_pool_t *p = r->pool;
    int i, w;

    ap_rprintf(r, "<h2>Account lookup</h2><form id=\"lookup-form\" "
               "method=\"get\" action=\"%s\"><label>account (user name, "
               "e-mail, header or cookie value) <input name=\"lookup\" "
               "value=\"%s\"></label> <label>route <select name=\"route\">"
               "<option value=\"\">every route</option>", self,
               snap->lookup ? hl_html_escape(p, snap->lookup) : "");
    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_conf_route_t *c = &APR_ARRAY_IDX(snap->routes, i,
                                                  hl_conf_route_t);
        if (c->quota->by == HL_BY_IP || c->quota->by == HL_BY_GLOBAL)
            continue;
        ap_rprintf(r, "<option value=\"%s\"%s>%s (%s)</option>",
                   hl_html_escape(p, c->name),
                   snap->lookup_route && !strcmp(snap->lookup_route, c->name)
                   ? " selected" : "", hl_html_escape(p, c->name),
                   hl_html_escape(p, c->where));
    }
    ap_rputs("</select></label> <button type=\"submit\">look up</button>"
             "</form>", r);
    if (!snap->account_routes)
        ap_rputs("<p>No route counts by account (by=header, cookie, param, "
                 "user or env).</p>", r);
    if (!snap->lookup || !*snap->lookup)
        return;
    if (!snap->lookups->nelts) {
        ap_rprintf(r, "<p id=\"lookup-none\">No route counts <b>%s</b> as an "
                   "account.</p>", hl_html_escape(p, snap->lookup));
        return;
    }
    ap_rputs("<table id=\"lookup\"><tr><th>route</th><th>rule</th><th>key</th>"
             "<th>requests per window</th><th>refusals now</th><th></th></tr>",
             r);
    for (i = 0; i < snap->lookups->nelts; ++i) {
        const hl_lookup_row_t *row = &APR_ARRAY_IDX(snap->lookups, i,
                                                    hl_lookup_row_t);
        const char *key = hl_html_escape(p, row->key);
        ap_rprintf(r, "<tr class=\"lookup\"><td>%s</td><td class=\"rule\">%s"
                   "</td><td class=\"key\">%s%s</td><td class=\"windows\">",
                   hl_html_escape(p, row->route), hl_html_escape(p, row->rule),
                   key, html_name(p, row->name));
        for (w = 0; w < row->nwindows; ++w)
            ap_rprintf(r, "%s<span class=\"count\">%u</span>%s", w ? " / " : "",
                       row->count[w], row->left_ms[w] > 0
                       ? apr_psprintf(p, " (clears in %s)", hl_status_duration(
                                      p, (row->left_ms[w] + 999) / 1000)) : "");
        ap_rprintf(r, "</td><td class=\"num\">%u</td><td><form class=\"reset\" "
                   "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                   "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                   "name=\"back\" value=\"1\"><button type=\"submit\">"
                   "reset</button></form></td></tr>", row->refusals, self, key);
    }
    ap_rputs("</table>", r);
}

/* Writes how long the counters have been counting (they outlive full
 * restarts when persisted) and how long this httpd has been up. */
static void html_uptime(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    char since[APR_RFC822_DATE_LEN] = "?", counting[APR_RFC822_DATE_LEN] = "?";

    if (snap->sum.started_ms)
        apr_rfc822_date(since, (apr_time_t)snap->sum.started_ms * 1000);
    if (snap->shared.counters_started_ms)
        apr_rfc822_date(counting,
                        (apr_time_t)snap->shared.counters_started_ms * 1000);
    ap_rprintf(r, "<p id=\"uptime\">Counters counting for %s (since %s); "
               "this httpd up for %s (since %s; a graceful restart keeps "
               "both, a full restart keeps only persisted counters).</p>",
               hl_status_duration(p, snap->counted_s), counting,
               hl_status_duration(p, snap->sum.uptime_s), since);
}

/* Writes the document's head (the style sheet; a refresh every refresh
 * seconds when > 0) and the page's title. */
static void html_head(request_rec *r, int refresh)
{
    ap_rputs("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"robots\" content=\"noindex, nofollow\">"
             "<title>mod_hotlimit status</title><style>body{font-family:sans-serif;"
             "margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
             "padding:.2em .6em;text-align:left;vertical-align:middle}"
             "td.num{text-align:right}form{margin:0}svg.chart{display:block}"
             ".key{font-family:monospace}.legend span{padding:0 .5em}.warn{color:#b00}"
             ".totals{font-size:.8em;color:#555}"
             "#summary{font-size:1.2em;padding:.4em;background:#f4f4f4}"
             "td.refused{font-weight:bold}tr.first td{background:#fdd}"
             "</style>", r);
    if (refresh > 0)
        ap_rprintf(r, "<meta http-equiv=\"refresh\" content=\"%d\">", refresh);
    ap_rputs("</head><body><h1>mod_hotlimit status</h1>", r);
}

/* Writes "Routes": the legend, then a row per route of snap->rows with
 * its chart, and what was not listed. */
static void html_routes(request_rec *r, const hl_snapshot_t *snap)
{
    int i;

    ap_rprintf(r, "<h2>Routes</h2><p class=\"legend\">Counts since the start; "
               "the chart shows the last %d minutes in bars of %d s, on a log "
               "scale (its top labelled), admitted above the line, refused "
               "below: "
               "<span style=\"color:#3a3\">&#9632; admitted</span>"
               "<span style=\"color:#e90\">&#9632; dry run (would have been "
               "rejected)</span><span style=\"color:#d22\">&#9632; "
               "rejected</span></p>"
               "<table id=\"routes\"><tr><th>route</th><th>rule</th>"
               "<th>limits</th><th>from</th><th>admitted</th>"
               "<th>refused by this rule</th><th>refused by another rule "
               "of the request</th><th>banned (HotLimitBan)</th>"
               "<th>dry run</th>"
               "<th>last %d min</th></tr>",
               HL_STATS_HISTORY * HL_STATS_TICK_MS / 60000,
               HL_STATS_TICK_MS / 1000,
               HL_STATS_HISTORY * HL_STATS_TICK_MS / 60000);
    for (i = 0; i < snap->rows->nelts; ++i)
        html_route(r, &APR_ARRAY_IDX(snap->rows, i, hl_page_route_t));
    ap_rputs("</table>", r);
    if (snap->routes_cut)
        ap_rprintf(r, "<p>%d more quota table routes not listed.</p>",
                   snap->routes_cut);
    if (!snap->routes->nelts)
        ap_rputs("<p>No HotLimitQuota in the configuration files and no quota "
                 "table routes.</p>", r);
}

/* Writes "Keys at their limit now", each with a reset button (a form
 * posting to self). */
static void html_limited(request_rec *r, const hl_snapshot_t *snap,
                         const char *self)
{
    apr_pool_t *p = r->pool;
    int i;

    ap_rputs("<h2>Keys at their limit now</h2>", r);
    html_limited_from(r, snap->limited_from);
    if (!snap->limited_total) {
        ap_rputs("<p id=\"limited-none\">None.</p>", r);
        return;
    }
    ap_rprintf(r, "<p>%u counter windows at their limit%s. Reset clears "
               "every window of the key.</p><table id=\"limited\"><tr>"
               "<th>key (route|client)</th><th>quota from</th><th>window</th>"
               "<th>requests</th><th>counter clears in</th><th></th></tr>",
               snap->limited_total,
               snap->limited_total > (uint32_t)snap->nlimited
               ? apr_psprintf(p, " (the first %d listed)", snap->nlimited) : "");
    for (i = 0; i < snap->nlimited; ++i) {
        const hl_limited_key_t *k = &snap->limited[i];
        const char *key = hl_html_escape(p, k->key);
        ap_rprintf(r, "<tr class=\"limited\"><td class=\"key\">%s%s</td>"
                   "<td>%s</td><td>%d</td><td class=\"num\">%u</td>"
                   "<td class=\"left\">%s</td><td><form class=\"reset\" "
                   "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                   "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                   "name=\"back\" value=\"1\"><button type=\"submit\">"
                   "reset</button></form></td></tr>", key,
                   html_name(p, k->name), k->from, k->window + 1, k->count,
                   hl_status_duration(p, (k->left_ms + 999) / 1000), self,
                   key);
    }
    ap_rputs("</table>", r);
}

/* Returns the cells saying why ban b holds: its HotLimitBan line, the
 * rule whose refusals started it, since when (ago, the date in its
 * title) and the refusals made while banned; "unknown" where the ban book
 * has no entry (another server sharing Redis started it). From p. */
static const char *html_ban_why(apr_pool_t *p, const hl_ban_entry_t *b)
{
    char date[APR_RFC822_DATE_LEN] = "";
    int64_t ago = (hl_now_ms() - b->since_ms) / 1000;

    if (!b->since_ms)
        return apr_psprintf(p, "<td class=\"line\">%s</td><td class=\"rule"
                            "\">unknown</td><td class=\"since\">unknown</td>"
                            "<td class=\"num\">&mdash;</td>",
                            !strcmp(b->by, "another server")
                            ? "another server" : "unknown");
    apr_rfc822_date(date, (apr_time_t)b->since_ms * 1000);
    return apr_psprintf(p, "<td class=\"line\">HotLimitBan %s%s</td>"
                        "<td class=\"rule\">%s</td><td class=\"since\" "
                        "title=\"%s\">%s ago</td><td class=\"num\">%"
                        APR_UINT64_T_FMT "</td>",
                        !strcmp(b->line, "table") ? "of the quota table"
                                                  : hl_html_escape(p, b->line),
                        !strcmp(b->by, "another server")
                        ? " (on another server)" : "",
                        *b->rule ? hl_html_escape(p, b->rule) : "&mdash;",
                        date, hl_status_duration(p, ago > 0 ? ago : 0),
                        (apr_uint64_t)b->refusals);
}

/* Writes "Bans": the bans in force (HotLimitBan), newest first, each with
 * why it holds and a button that lifts it, a button that lifts them all
 * (forms posting to self), and the bans started since start. */
static void html_bans(request_rec *r, const hl_snapshot_t *snap,
                      const char *self)
{
    apr_pool_t *p = r->pool;
    uint64_t total = hl_ban_total();
    int i;

    ap_rprintf(r, "<h2>Bans</h2><p id=\"bans-total\">%" APR_UINT64_T_FMT
               " ban%s started since the counters started.</p>",
               (apr_uint64_t)total, total == 1 ? "" : "s");
    if (!snap->bans->nelts) {
        ap_rputs("<p id=\"bans\">No client is banned now.</p>", r);
        return;
    }
    ap_rprintf(r, "<form id=\"lift-all\" method=\"post\" action=\"%s\">"
               "<input type=\"hidden\" name=\"lift\" value=\"all\">"
               "<input type=\"hidden\" name=\"back\" value=\"1\"><button "
               "type=\"submit\">lift all %d bans</button></form>", self,
               snap->bans->nelts);
    ap_rputs("<table id=\"bans\"><tr><th>client</th><th>host</th>"
             "<th>banned by</th><th>after refusals by rule</th><th>since</th>"
             "<th>refused while banned</th><th>lifted in</th><th></th></tr>", r);
    for (i = 0; i < snap->bans->nelts; ++i) {
        const hl_ban_entry_t *b = &APR_ARRAY_IDX(snap->bans, i, hl_ban_entry_t);
        const char *key = hl_html_escape(p, b->key);
        ap_rprintf(r, "<tr class=\"ban\">%s%s"
                   "<td class=\"left\">%s</td><td><form class=\"reset\" "
                   "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                   "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                   "name=\"back\" value=\"1\"><button type=\"submit\">"
                   "lift</button></form></td></tr>",
                   html_ban_cells(p, b), html_ban_why(p, b),
                   hl_status_duration(p, (b->left_ms + 999) / 1000),
                   self, key);
    }
    ap_rputs("</table>", r);
}

/* Writes "Quota table": its source, state, generation and reloads. */
static void html_table(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    char when[APR_RFC822_DATE_LEN] = "never";

    if (snap->table.table_loaded_ms)
        apr_rfc822_date(when, (apr_time_t)snap->table.table_loaded_ms * 1000);
    ap_rprintf(r, "<h2>Quota table</h2><table id=\"table\">"
               "<tr><th>source</th><td>%s</td></tr>"
               "<tr><th>enabled</th><td>%s</td></tr>"
               "<tr><th>generation</th><td>%" APR_UINT64_T_FMT "</td></tr>"
               "<tr><th>routes</th><td>%u</td></tr>"
               "<tr><th>entries skipped (invalid)</th><td>%u</td></tr>"
               "<tr><th>last reload</th><td>%s</td></tr>"
               "<tr><th>last result</th><td>%s: %s</td></tr>"
               "<tr><th>reloads ok / unchanged / failed</th><td>%" APR_UINT64_T_FMT
               " / %" APR_UINT64_T_FMT " / %" APR_UINT64_T_FMT "</td></tr></table>",
               snap->table.table_source[0]
                   ? hl_html_escape(p, snap->table.table_source) : "(none)",
               snap->table.table_enabled ? "yes" : "no (kill switch)",
               (apr_uint64_t)snap->table.table_generation,
               snap->table.table_routes, snap->table.table_skipped, when,
               snap->sum.table_result,
               hl_html_escape(p, snap->table.table_message),
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_OK],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_UNCHANGED],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_FAILED]);
}

/* Writes "Redis store" (with the Redis store only) and "Store": the
 * shared memory's slots, evictions and classes. */
static void html_store(request_rec *r, const hl_snapshot_t *snap)
{
    const hl_store_figures_t *f = &snap->store;

    if (f->configured)
        ap_rprintf(r, "<h2>Redis store</h2><p id=\"redis\">%s: %"
                   APR_UINT64_T_FMT " decisions answered, %" APR_UINT64_T_FMT
                   " decided by HotLimitStoreFailure while it could not "
                   "answer, %" APR_UINT64_T_FMT " failed round trips. The "
                   "shared memory below is its local fallback.</p>",
                   f->up ? "answering" : "NOT ANSWERING (breaker open)",
                   (apr_uint64_t)f->decisions, (apr_uint64_t)f->fallbacks,
                   (apr_uint64_t)f->errors);
    ap_rprintf(r, "<h2>Store</h2><p id=\"store\">Shared memory, %u stripes "
               "(each with its own lock): %u counter slots used of %u, %"
               APR_UINT64_T_FMT " evictions (live counters reused: raise "
               "HotLimitSlots if this grows), %" APR_UINT64_T_FMT " expired "
               "reused, %u eviction classes.</p>", snap->stripes, snap->used,
               snap->capacity, (apr_uint64_t)snap->evictions,
               (apr_uint64_t)snap->reclaims, snap->classes);
}

/* Writes "Busiest keys": each key's busiest window. */
static void html_top(request_rec *r, const hl_snapshot_t *snap)
{
    int i;

    ap_rputs("<h2>Busiest keys</h2><p>Each key's busiest window: "
             "window 1 is the first of its quota (<code>5/1m</code> in "
             "<code>HotLimitQuota 5/1m 30/1h</code>), 2 the second.</p>"
             "<table><tr><th>key</th><th>quota from</th><th>window</th>"
             "<th>requests in that window</th></tr>", r);
    for (i = 0; i < snap->ntop; ++i)
        ap_rprintf(r, "<tr><td class=\"key\">%s%s</td><td>%s</td><td>%d</td>"
                   "<td class=\"num\">%u</td></tr>",
                   hl_html_escape(r->pool, snap->top[i].key),
                   html_name(r->pool, snap->top[i].name),
                   snap->top[i].from, snap->top[i].window + 1,
                   snap->top[i].count);
    ap_rputs("</table>", r);
}

void hl_status_write_html(request_rec *r, const hl_snapshot_t *snap,
                          int refresh)
{
    const char *self = hl_html_escape(r->pool, r->uri);

    ap_set_content_type(r, "text/html; charset=utf-8");
    html_head(r, refresh);
    html_summary(r, snap);
    html_refused(r, snap, self);
    html_routes(r, snap);
    html_limited(r, snap, self);
    html_bans(r, snap, self);
    html_lookup(r, snap, self);
    html_table(r, snap);
    html_store(r, snap);
    html_top(r, snap);
    html_uptime(r, snap);
    ap_rputs("<p><a href=\"?json\">JSON</a> &middot; "
             "<a href=\"?metrics\">metrics</a> &middot; "
             "<a href=\"?refresh=5\">refresh every 5 s</a></p></body></html>\n", r);
}
