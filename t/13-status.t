# The hotlimit-status handler: ?json and ?metrics report what this test
# did to /stat (2 admitted, 2 rejected), the slot table's use and capacity;
# POST reset=KEY clears a bucket so the next request is admitted again.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET POST);
use HLTest;

plan tests => 22 + 5 + 7 + 2 + 5;

my @codes = map { GET('/stat/')->code } 1 .. 4;
ok t_cmp("@codes", '200 200 429 429', '/stat: 2 admitted, 2 rejected');

# --- ?json ---------------------------------------------------------------------------
{
    my $res = GET '/hotlimit-status?json';
    ok t_cmp($res->code, 200, '?json: 200');
    ok t_cmp($res->header('Content-Type'), qr{^application/json}, '?json: JSON');
    my $j = hl_json($res) || {};
    ok t_cmp(($j->{slots}{used} // 0) > 0 ? 1 : 0, 1, "?json: slots.used = " . ($j->{slots}{used} // 'undef') . ' > 0');
    ok t_cmp($j->{slots}{capacity}, 4096, '?json: slots.capacity = HotLimitSlots 4096');
    my ($route) = grep { $_->{route} eq '/stat' } @{ $j->{routes} || [] };
    ok t_cmp($route ? "$route->{admitted}/$route->{rejected}" : '', '2/2', '?json: /stat admitted 2, rejected 2');
    # top_keys holds the 20 busiest counters, busiest first; earlier tests
    # made many, so /stat|127.0.0.1 (count 2) is listed, or 20 keys with
    # counts of at least 2 are.
    my @top = @{ $j->{top_keys} || [] };
    my ($key) = grep { $_->{key} eq '/stat|127.0.0.1' } @top;
    my $sorted = !grep { $top[$_]{count} > $top[$_ - 1]{count} } 1 .. $#top;
    ok t_cmp($sorted && ($key ? $key->{count} == 2
                              : @top == 20 && $top[-1]{count} >= 2) ? 1 : 0, 1,
             '?json: top_keys sorted, /stat|127.0.0.1 (2) among them or outranked');
    ok t_cmp(ref $j->{table} eq 'HASH' && exists $j->{table}{generation} ? 1 : 0, 1, '?json: a table object');
    ok t_cmp($key ? "$key->{quota} $key->{window}" : 'directive 1', 'directive 1',
             '?json: the key counts in window 1 of a directive quota');
    ok t_cmp(($j->{started_ms} // 0) > 1e12 && ($j->{uptime_s} // -1) >= 0 ? 1 : 0, 1,
             "?json: started_ms " . ($j->{started_ms} // 'undef') . ", uptime_s " . ($j->{uptime_s} // 'undef'));
    ok t_cmp(($j->{totals}{rejected} // 0) >= 2 ? 1 : 0, 1, '?json: totals.rejected counts /stat\'s 2');
}

# --- ?metrics --------------------------------------------------------------------------
{
    my $res = GET '/hotlimit-status?metrics';
    my $m = $res->content;
    ok t_cmp($res->header('Content-Type'), qr{^text/plain}, '?metrics: text/plain');
    ok t_cmp($m, qr/^hotlimit_requests_total\{route="\/stat",decision="rejected"\} 2$/m, 'metrics: rejected 2');
    ok t_cmp($m, qr/^hotlimit_requests_total\{route="\/stat",decision="admitted"\} 2$/m, 'metrics: admitted 2');
    ok t_cmp($m, qr/^hotlimit_slots_capacity 4096$/m, 'metrics: hotlimit_slots_capacity 4096');
    ok t_cmp($m, qr/^hotlimit_slots_used [1-9]\d*$/m, 'metrics: hotlimit_slots_used > 0');
    ok t_cmp($m, qr/^# TYPE hotlimit_requests_total counter$/m, 'metrics: TYPE line');
    ok t_cmp($m, qr/^hotlimit_table_generation \d+$/m, 'metrics: hotlimit_table_generation');
    ok t_cmp($m, qr/^hotlimit_evictions_total \d+$/m, 'metrics: hotlimit_evictions_total');
    ok t_cmp($m, qr/^hotlimit_table_last_reload_timestamp_seconds 0$/m,
             'metrics: hotlimit_table_last_reload_timestamp_seconds 0 (no quota table)');
    my ($start) = $m =~ /^hotlimit_start_time_seconds (\d+\.\d{3})$/m;
    ok t_cmp(defined $start && $start > 1e9 && $start <= time + 1 ? 1 : 0, 1,
             'metrics: hotlimit_start_time_seconds ' . ($start // 'missing'));
    my %seen = map { $_ => 1 } $m =~ /^(hotlimit_[a-z_]+)[ {]/mg;
    my @bare = grep { $m !~ /^# HELP \Q$_\E \S/m || $m !~ /^# TYPE \Q$_\E (?:counter|gauge)$/m } sort keys %seen;
    ok t_cmp("@bare", '', 'metrics: every metric has # HELP and # TYPE');
}

# --- ?metrics= and ?json=: what Prometheus sends for params: {metrics: [""]} --------
{
    my $res = GET '/hotlimit-status?metrics=';
    ok t_cmp($res->content, qr/^# TYPE hotlimit_slots_used gauge$/m, '?metrics= (empty value): metrics too');
    $res = GET '/hotlimit-status?json=';
    ok t_cmp($res->header('Content-Type'), qr{^application/json}, '?json= (empty value): JSON too');
}

# --- HTML ------------------------------------------------------------------------------
{
    my $res = GET '/hotlimit-status';
    ok t_cmp($res->content, qr{<h1>mod_hotlimit status</h1>.*<td class="name">/stat</td><td class="rule">[^<]*/extra\.conf:\d+</td><td class="limits">2/1m by=ip</td><td>HotLimitQuota</td><td class="num">2</td><td class="num refused">2</td><td class="num">0</td>}s,
             'HTML page: /stat with its rule (FILE:LINE), its limits, 2 admitted and 2 refused by it');
    ok t_cmp($res->content, qr{<th>window</th><th>requests in that window</th>.*<p id="uptime">Counters counting for \d+ (?:s|min|h|d)\b.*this httpd up for \d+ (?:s|min|h|d)\b}s,
             'HTML page: uptime, and which window a busy key is counted in');
    ok t_cmp($res->content, qr{<tr class="limited"><td class="key">/stat\|127\.0\.0\.1</td>.*?<form class="reset" method="post" action="/hotlimit-status"><input type="hidden" name="reset" value="/stat\|127\.0\.0\.1">}s,
             'HTML page: /stat|127.0.0.1 at its limit, with a reset button');
    ok t_cmp($res->content, qr{<p id="bans">No client is banned now\.</p>.*<p id="store">Shared memory, \d+ stripes}s,
             'HTML page: bans and store health');
    my $j = hl_json(GET '/hotlimit-status?json') || {};
    my ($lk) = grep { $_->{key} eq '/stat|127.0.0.1' } @{ $j->{limited_keys} || [] };
    ok t_cmp($lk ? "$lk->{quota} $lk->{window} " . ($lk->{left_ms} > 0 ? 'left' : 'none') : '',
             'directive 1 left', '?json: limited_keys has /stat|127.0.0.1, window 1, time left');
    my ($route) = grep { $_->{route} eq '/stat' } @{ $j->{routes} || [] };
    my $hist = 0;
    $hist += $_->[0] + $_->[1] + $_->[2] for @{ $route ? $route->{history} : [] };
    ok t_cmp(($route ? $route->{limits} : '') . " history $hist", '2/1m by=ip history 4',
             '?json: /stat limits and its 4 decisions in the history');
}

# --- cross-site resets are refused (Origin, Sec-Fetch-Site) ------------------------------
{
    my $off = hl_offset(hl_error_log());
    my $res = POST '/hotlimit-status', content => [ reset => '/stat|127.0.0.1' ],
                   Origin => 'https://evil.example';
    ok t_cmp($res->code, 403, 'POST reset with a foreign Origin: 403');
    $res = POST '/hotlimit-status', content => [ reset => '/stat|127.0.0.1' ],
                'Sec-Fetch-Site' => 'cross-site';
    ok t_cmp($res->code, 403, 'POST reset with Sec-Fetch-Site: cross-site: 403');
    $res = POST '/hotlimit-status', content => [ reset => '/stat|127.0.0.1' ],
                Origin => 'null';
    ok t_cmp($res->code, 403, 'POST reset with Origin: null (sandboxed page): 403');
    # DNS rebinding: a page of evil.example, whose name now resolves to this
    # server, is same-origin with the status page as the browser sees it.
    my ($port) = Apache::TestRequest::hostport() =~ /:(\d+)$/;
    $res = POST '/hotlimit-status', content => [ reset => '/stat|127.0.0.1' ],
                Host => "evil.example:$port", Origin => "http://evil.example:$port",
                'Sec-Fetch-Site' => 'same-origin';
    ok t_cmp($res->code, 421, 'POST reset from a name that is not this server\'s (DNS rebinding): '
             . '421 (its Host is refused on every method, t/59-status-scope.t)');
    ok t_cmp(GET('/stat/')->code, 429, 'the key is still spent after the refused resets');
    my @l = hl_wait_lines(hl_error_log(), $off, sub { grep { /HL00301/ } @_ }, 3);
    ok t_cmp(scalar(grep { /HL00301: cross-site reset refused \(Origin: https:\/\/evil\.example\)/ } @l), 1,
             'error log: HL00301 says why');
}

# --- POST reset=KEY ----------------------------------------------------------------------
{
    my $off = hl_offset(hl_error_log());
    my $origin = 'http://' . Apache::TestRequest::hostport();
    my $res = POST '/hotlimit-status', content => [ reset => '/stat|127.0.0.1' ],
                   Origin => $origin, 'Sec-Fetch-Site' => 'same-origin';
    t_debug("same-origin reset with Origin: $origin");
    ok t_cmp($res->code, 200, 'POST reset from the same origin: 200');
    my $j = hl_json($res) || {};
    ok t_cmp(($j->{reset} // '') . ' ' . (($j->{removed} // 0) > 0 ? 'removed' : 'nothing'),
             '/stat|127.0.0.1 removed', 'POST reset: the key was removed');
    ok t_cmp(GET('/stat/')->code, 200, 'after the reset: admitted again');
    GET('/stat/') for 1 .. 2;
    # The page's button sends back=1: answered with a 303 to the page.
    $res = POST '/hotlimit-status', content => [ reset => '/stat|127.0.0.1', back => 1 ],
                Origin => $origin, 'Sec-Fetch-Site' => 'same-origin';
    ok t_cmp($res->code . ' ' . ($res->header('Location') // ''), qr{^303 http://[^/]+/hotlimit-status$},
             'POST reset from the page: 303 back to it');
    my @l = hl_wait_lines(hl_error_log(), $off, sub { (grep { /HL00300/ } @_) >= 2 }, 3);
    ok t_cmp(scalar(grep { /HL00300: counters of key '\/stat\|127\.0\.0\.1' reset by 127\.0\.0\.1/ } @l), 2,
             'error log: HL00300 names the key and who reset it, for both resets');
}
