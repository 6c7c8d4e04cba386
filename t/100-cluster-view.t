# The cluster-wide view (issue 28) under HotLimitStore redis-cluster://:
# two httpds A and B (one of each MPM) share a 3-master Redis Cluster
# (t/lib/HLCluster.pm); the view's keys all carry the tag {hl}, so they
# live on the one master of that slot:
#  - a client flooded on A only is ranked first on B's page (?json and
#    HTML) with A's refusal count, summed over 2 servers; B's own refusal
#    is counted once, and A's page shows it;
#  - a ban started on A appears on B with A's HotLimitBan line and rule;
#  - the cluster holds one view per server, on the {hl} slot's master.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;
use HLCluster;
use HLFleet;

plan tests => 14, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() },
    need_module('remoteip');

my $cl = HLCluster->new('c100', 3)->start;
my $common = <<"CONF";
HotLimitStore redis-cluster://${\ $cl->addr(0)},${\ $cl->addr(1)}
HotLimitStoreTimeout 200
RemoteIPHeader X-Forwarded-For
RemoteIPTrustedProxy 127.0.0.1
HotLimitBan 8/1m 1h
<Location /lim>
    HotLimitQuota 2/1m
</Location>
CONF
my $sa = start_httpd(name => 'cview-a', conf => $common);
my $sb = start_httpd(name => 'cview-b', conf => $common, mpm => hl_other_mpm());
my $mpms = hl_mpm() . '+' . hl_other_mpm();

my $flood = '203.0.113.19';
my $quiet = '198.51.100.17';

# --- a flood on A only, a quiet client refused once on B: B's ranking -------------
my $st = fleet_flood_and_rank($sa, $sb, $flood, $quiet, $mpms);

my $html = $sb->get('/hotlimit-status')->content;
ok t_cmp($html, qr{<tr class="refused first"><td class="client key">\Q$flood\E</td><td class="key">/lim\|\Q$flood\E</td><td>/lim</td><td class="rule">[^<]*</td><td class="num">8</td>},
         'B\'s HTML: the flooder of A first, with 8 refusals');

my $bs = refused_row($sa->status, "/lim|$quiet");
ok t_cmp($bs ? $bs->{refusals} : -1, 1, 'A ranks the client refused on B');

# --- the ban started on A, on B ----------------------------------------------------
my ($ban) = grep { $_->{client} eq $flood } @{ $st->{bans} || [] };
ok t_cmp($ban ? "$ban->{line} | $ban->{rule}" : '',
         line_of($sa, qr{^HotLimitBan }) . ' | ' . line_of($sa, qr{HotLimitQuota 2/1m}),
         'B lists the ban with A\'s HotLimitBan line and rule');
ok t_cmp($ban ? $ban->{by} : '', 'another server', '... started by another server');

# --- the views: one per server, all on the master of the {hl} slot ---------------
my @on = map {
    my @k = grep { length } split /\n/, $cl->{nodes}[$_]->cli('--scan', '--pattern', "'hl:{hl}:view*'");
    scalar @k;
} 0 .. 2;
ok t_cmp(join(' ', sort { $a <=> $b } @on), '0 0 3',
         "2 views and their list on one master (@on)");
