# Steps of the system clock (NTP, date -s, a VM resume) neither stall a
# client nor free one (spec section 8). httpd runs under the test clock
# (t/support/clockshift.c, start_httpd clock => 1), which steps its wall
# clock alone (set_wall_offset) or makes time pass on both its clocks
# (pass_time); the module decides on a monotonic clock, so:
#   - a client at its limit stays refused after a step back or forward;
#   - Retry-After never exceeds the window, and the client is admitted
#     again when it says, whichever way the clock stepped meanwhile.
# Fixed, sliding and GCRA windows, and a by=global GCRA fuse.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

# [ path, name, the longest Retry-After the algorithm can give for 2/3s ]
# A sliding window counter may need up to window + window / COUNT before
# the previous window has decayed enough: 3 + 1.5 s, 5 s rounded up.
my @algos = (['/fx', 'fixed', 3], ['/sl', 'sliding', 5], ['/gc', 'gcra', 3],
             ['/gf', 'global gcra', 3]);
plan tests => 2 + 7 * @algos;

my $h = start_httpd(name => 'clock', clock => 1, conf => <<'CONF');
<Location /fx>
    HotLimitQuota 2/3s
</Location>
<Location /sl>
    HotLimitQuota 2/3s algo=sliding
</Location>
<Location /gc>
    HotLimitQuota 2/3s algo=gcra
</Location>
<Location /gf>
    HotLimitQuota 2/3s by=global algo=gcra
</Location>
CONF

# The shim is in force: httpd's Date header follows the shifted clock.
$h->set_wall_offset(-86400);
my $date = $h->get('/index.html')->header('Date') // '';
my $shifted = HTTP::Date::str2time($date) // 0;
ok t_cmp(abs($shifted - (time - 86400)) < 120 ? 1 : 0, 1,
         "httpd's clock is shifted by the shim (Date: $date)");
$h->set_wall_offset(0);
ok t_cmp($h->get('/index.html')->code, 200, 'server answers with the clock back in place');

for my $a (@algos) {
    my ($path, $name, $max) = @$a;
    $h->set_wall_offset(0);
    my $codes = $h->codes($path, 2);
    ok t_cmp($codes, '200 200', "$name: two of 2/3s admitted");

    # One hour back: the client stays refused, told to wait at most 3 s.
    $h->set_wall_offset(-3600);
    my $res = $h->get($path);
    my $ra = $res->header('Retry-After') // 999;
    ok t_cmp($res->code, 429, "$name: clock one hour back: still refused");
    ok t_cmp($ra >= 1 && $ra <= $max ? 1 : 0, 1,
             "$name: Retry-After $ra is within the window (at most $max s)");

    # Two hours forward (one ahead of the truth): nobody is freed.
    $h->set_wall_offset(3600);
    ok t_cmp($h->get($path)->code, 429, "$name: clock one hour ahead: still refused");

    # The limit keeps its rate: admitted again once Retry-After has passed.
    $res = $h->get($path);
    $ra = $res->header('Retry-After') // $max;
    ok t_cmp($ra <= $max ? 1 : 0, 1, "$name: Retry-After $ra still within the window");
    $h->pass_time($ra + 0.3);
    $h->set_wall_offset(-7200);
    ok t_cmp($h->get($path)->code, 200,
             "$name: admitted again after Retry-After, clock two hours back");
    my $after = $h->get($path);
    ok t_cmp($after->code == 200 || $after->code == 429 ? 1 : 0, 1,
             "$name: the next request is decided normally (" . $after->code . ")");
}
