# HotLimitDryRun On: requests are counted and would-be rejections logged
# (HL00101) and counted as dry_run, but nothing is ever rejected; a real
# rejection logs HL00100.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 9;

my $eoff = hl_offset(hl_error_log());
my $aoff = hl_offset(hl_access_log());
my @codes = map { GET('/dry/', 'User-Agent' => 'hl-dry-agent')->code } 1 .. 5;
ok t_cmp("@codes", '200 200 200 200 200', 'dry run: never 429');

my @e = hl_wait_lines(hl_error_log(), $eoff, sub { grep { /HL00101/ } @_ }, 5);
my @dry = grep { /HL00101/ } @e;
ok t_cmp(scalar @dry, 1, 'error log: HL00101 once for the 3 would-be rejections of one key '
         . '(HotLimitLogRefusals first: later ones are summed, t/58-log-refusals.t)');
ok t_cmp($dry[0] // '', qr/HL00101: dry run, would reject client=127\.0\.0\.1 route=\/dry key=\/dry\|127\.0\.0\.1 limit=2\/1m retry_after=\d+ user_agent="hl-dry-agent"/,
         'HL00101 names client, route, key, limit, Retry-After and User-Agent');
ok t_cmp(scalar(grep { /HL00100/ && /route=\/dry/ } @e), 0, 'no HL00100 (real rejection) for /dry');

my @r = sort { $b->{rem} <=> $a->{rem} } hl_access_since($aoff, qr{^/dry/}, 5);
ok t_cmp(join(' ', map { $_->{rem} } @r), '1 0 0 0 0', 'HOTLIMIT_REMAINING reaches 0 and stays');

my $j = hl_json(GET('/hotlimit-status?json')) || {};
my ($route) = grep { $_->{route} eq '/dry' } @{ $j->{routes} || [] };
ok t_cmp($route ? "$route->{admitted} $route->{rejected} $route->{dry_run}" : '', '2 0 3',
         'status: /dry admitted 2, rejected 0, dry_run 3');

# A real rejection (/rejlog 1/1m) logs HL00100 with the same fields, once.
my $off2 = hl_offset(hl_error_log());
my @c2 = map { GET('/rejlog/', 'User-Agent' => 'hl-rej-agent')->code } 1 .. 2;
ok t_cmp("@c2", '200 429', '/rejlog: second rejected');
my @e2 = hl_wait_lines(hl_error_log(), $off2, sub { grep { /HL00100/ } @_ }, 5);
my @rej = grep { /HL00100/ } @e2;
ok t_cmp(scalar @rej, 1, 'error log: one HL00100 for one rejection');
ok t_cmp($rej[0] // '', qr/\[hotlimit:info\].* HL00100: rejected client=127\.0\.0\.1 route=\/rejlog key=\/rejlog\|127\.0\.0\.1 limit=1\/1m retry_after=\d+ user_agent="hl-rej-agent"/,
         'HL00100 at hotlimit:info names client, route, key, limit, Retry-After and User-Agent');
