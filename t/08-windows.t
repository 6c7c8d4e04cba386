# Several windows in one quota: HotLimitQuota 3/2s 5/1m. The short window
# rejects the fourth request; once it has passed, two more are admitted and
# the minute window rejects the next.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 18;

my $J = 'application/problem+json';
GET '/hl-free/';    # the first request of a client can be slow to set up
my $t0;
for my $i (1 .. 3) {
    my $res = GET '/multi/';
    $t0 //= time;       # the 2 s window started before this
    ok t_cmp($res->code, 200, "request $i admitted");
    if ($i == 1) {
        ok t_cmp($res->header('RateLimit-Policy'), '"3/2s";q=3;w=2, "5/1m";q=5;w=60',
                 'RateLimit-Policy lists both windows');
        ok t_cmp($res->header('RateLimit') // '', qr/^"3\/2s";r=2;t=[12]$/,
                 'RateLimit reports the window with the least remaining');
    }
}
{
    my $res = GET '/multi/', Accept => $J;
    ok t_cmp($res->code, 429, 'fourth within 2 s: 429');
    my $ra = $res->header('Retry-After') // 0;
    ok t_cmp($ra >= 1 && $ra <= 2 ? 1 : 0, 1, "Retry-After $ra <= 2");
    my $j = hl_json($res) || {};
    ok t_cmp(join(',', @{ $j->{'violated-policies'} || [] }), '3/2s', 'violated: 3/2s');
    ok t_cmp($res->header('RateLimit') // '', qr/^"3\/2s";r=0;t=[12]$/, '429: RateLimit of the 2 s window');
}
# The 2 s window started at the first request (before $t0).
my $wait = $t0 + 2.1 - time;
sleep $wait if $wait > 0;
for my $i (4 .. 5) {
    my $res = GET '/multi/';
    ok t_cmp($res->code, 200, "after 2 s: request $i admitted");
    ok t_cmp($res->header('RateLimit') // '', qr/^"(?:3\/2s|5\/1m)";r=${\ (5 - $i)};t=\d+$/,
             "after 2 s: request $i, RateLimit r=" . (5 - $i));
}
{
    my $res = GET '/multi/', Accept => $J;
    ok t_cmp($res->code, 429, 'sixth admitted request would exceed 5/1m: 429');
    my $j = hl_json($res) || {};
    ok t_cmp(join(',', @{ $j->{'violated-policies'} || [] }), '5/1m', 'violated: 5/1m only');
    my $ra = $res->header('Retry-After') // 0;
    ok t_cmp($ra > 2 && $ra <= 60 ? 1 : 0, 1, "Retry-After $ra follows the minute window");
    ok t_cmp($j->{retry_after}, $ra, 'retry_after in the body = Retry-After');
    ok t_cmp($res->header('RateLimit') // '', qr/^"5\/1m";r=0;t=\d+$/, '429: RateLimit of the 1m window');
}
