# The cluster-wide view (issue 28): with a Redis store, every server's
# status page shows the whole attack. Two httpds A and B share one Redis
# (A by redis://, B by redis-sentinel://):
#  - a client flooded on A only is ranked first on B's page (?json and
#    HTML) with A's refusal count; the rule is named;
#  - B's own refusals are summed in once, not twice (B's own published
#    view is left out), and A's page shows B's;
#  - a ban started on A appears on B with A's HotLimitBan line and rule,
#    since when and A's refusals while banned, marked as another server's;
#  - once no server has refused anything for the view's TTL (5 s), the
#    other server's entries go from B's page and from Redis.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(sleep time);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;
use HLFleet;

plan tests => 22, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() },
    need_module('remoteip');

# A reaches the Redis directly (redis://), B through a Sentinel
# (redis-sentinel://): the view works with any Redis provider.
my $redis = HLRedis->new('fleet-view')->start;
my $rport = $redis->port;
my $sentinel = HLRedis->sentinel('fleet-sent', 'fleetm', $rport)->start;
my $common = <<"CONF";
@{[ $redis->secret_conf ]}HotLimitStoreTimeout 200
RemoteIPHeader X-Forwarded-For
RemoteIPTrustedProxy 127.0.0.1
HotLimitBan 8/1m 1h
<Location /lim>
    HotLimitQuota 2/1m
</Location>
CONF
my $a = start_httpd(name => 'fleet-a',
                    conf => "HotLimitStore redis://127.0.0.1:$rport\n$common");
my $b = start_httpd(name => 'fleet-b', mpm => hl_other_mpm(), conf =>
    "HotLimitStore redis-sentinel://fleetm\@127.0.0.1:${\ $sentinel->port}\n$common");
my $mpms = hl_mpm() . '+' . hl_other_mpm();

my $flood = '203.0.113.9';
my $quiet = '198.51.100.7';

# --- a flood on A only, a quiet client refused once on B: B's ranking -------------
my $st = fleet_flood_and_rank($a, $b, $flood, $quiet, $mpms);

my $html = $b->get('/hotlimit-status')->content;
ok t_cmp($html, qr{<tr class="refused first"><td class="client key">\Q$flood\E</td><td class="key">/lim\|\Q$flood\E</td><td>/lim</td><td class="rule">[^<]*</td><td class="num">8</td>},
         'B\'s HTML: the flooder of A first, with 8 refusals');
ok t_cmp($html, qr{id="refused-servers"[^>]*>Summed over 2 servers}, '... summed over 2 servers');

# A's page shows B's refusal.
my $ast = $a->status;
my $bs = refused_row($ast, "/lim|$quiet");
ok t_cmp($bs ? $bs->{refusals} : -1, 1, 'A ranks the client refused on B');

# --- the ban started on A, on B ---------------------------------------------------
my ($ban) = grep { $_->{client} eq $flood } @{ $st->{bans} || [] };
ok t_cmp($ban ? "$ban->{line} | $ban->{rule}" : '',
         line_of($a, qr{^HotLimitBan }) . ' | ' . line_of($a, qr{HotLimitQuota 2/1m}),
         'B lists the ban with A\'s HotLimitBan line and rule');
ok t_cmp($ban ? ($ban->{by} . ' ' . ($ban->{since_ms} > 0 ? 'since' : 'no since') . ' ' . $ban->{refusals}) : '',
         'another server since 3', '... started by another server, since when, 3 refusals while banned');
ok t_cmp($html, qr{<tr class="ban">.*?HotLimitBan \Q@{[ line_of($a, qr{^HotLimitBan }) ]}\E \(on another server\)}s,
         'B\'s HTML: the ban with A\'s line, on another server');

# --- Redis holds a bounded view per server, which expires -------------------------
my $views = $redis->cli('ZCARD', "'hl:{hl}:views'");
ok t_cmp($views, 2, 'Redis lists the 2 servers that published');
my @keys = split /\n/, $redis->cli('--scan', '--pattern', "'hl:{hl}:view:*'");
my $pttl = @keys ? $redis->cli('PTTL', "'$keys[0]'") : -1;
ok t_cmp(@keys == 2 && $pttl > 0 && $pttl <= 5000 ? 1 : 0, 1,
         "a view per server, expiring (PTTL $pttl ms)");

# No refusal anywhere for longer than the TTL (5 s): the views go.
sleep 5.5;
$st = $b->status;
ok t_cmp(refused_row($st, "/lim|$flood") ? 1 : 0, 0, 'after the TTL A\'s flooder is gone from B\'s page');
($ban) = grep { $_->{client} eq $flood } @{ $st->{bans} || [] };
ok t_cmp($ban ? "$ban->{by} '$ban->{line}'" : '', "another server ''",
         '... the ban stays (it is in Redis), its why unknown: another server');
my @left = split /\n/, $redis->cli('--scan', '--pattern', "'hl:{hl}:view:*'");
ok t_cmp($redis->cli('ZCARD', "'hl:{hl}:views'") . ' ' . scalar(@left),
         '0 0', 'Redis: no view left, and the ids forgotten');

# --- what publishing costs: admitted requests nothing, a flood one call a second ---
# The decisions run the module's script by EVALSHA; a view is published
# by EVAL.
sub evals { ($redis->cli('INFO', 'commandstats') =~ /^cmdstat_eval:calls=(\d+)/m)[0] // 0 }
my $e0 = evals();
ok t_cmp(fleet_as($a, '192.0.2.50', 2) . ' ' . (evals() - $e0), '200 200 0',
         'admitted requests publish nothing');
$e0 = evals();
my $t0 = time;
fleet_as($a, '192.0.2.50', 30);
my ($took, $published) = (time - $t0, evals() - $e0);
ok t_cmp($published >= 1 && $published <= 1 + int($took) ? 1 : 0, 1,
         sprintf('30 refusals in %.2f s: published %d time(s), at most once a second', $took, $published));
