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
use Time::HiRes qw(sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;
use HLCluster;

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

# The FILE:LINE of a directive (matching $re) in $h's configuration.
sub line_of {
    my ($h, $re) = @_;
    open my $fh, '<', $h->{conf_file} or die "$h->{conf_file}: $!";
    while (<$fh>) { return "$h->{conf_file}:$." if /$re/ }
    return '';
}
sub as { my ($h, $ip, $n) = @_; $h->codes('/lim', $n, 'X-Forwarded-For' => $ip) }
sub refused_row {
    my ($st, $key) = @_;
    my ($e) = grep { $_->{key} eq $key } @{ $st->{top_refused} || [] };
    return $e;
}

my $flood = '203.0.113.19';
my $quiet = '198.51.100.17';

# --- a flood on A only: 2 admitted, 8 refused by the quota (the 8th starts
# the ban), 2 as banned; a second later one more publishes A's view now.
ok t_cmp(as($sa, $flood, 12), '200 200' . ' 429' x 10, "[$mpms] A: the flood, 2 admitted then refused");
sleep 1.1;
ok t_cmp(as($sa, $flood, 1), '429', '... and a second later once more (banned)');
ok t_cmp(as($sb, $quiet, 3), '200 200 429', 'B: a quiet client refused once');

my $st = $sb->status;
my $top = $st->{top_refused} || [];
ok t_cmp(@$top ? $top->[0]{key} : '', "/lim|$flood", 'B ranks the client flooded on A first');
ok t_cmp(@$top ? $top->[0]{refusals} : -1, 8, '... with A\'s refusal count');
ok t_cmp(@$top ? $top->[0]{rule} : '', line_of($sb, qr{HotLimitQuota 2/1m}), '... and the rule');
ok t_cmp($st->{top_refused_servers} // 0, 2, 'summed over 2 servers');
my $own = refused_row($st, "/lim|$quiet");
ok t_cmp($own ? $own->{refusals} : -1, 1, 'B\'s own refusal counted once, not twice');
my $banned = refused_row($st, "ban|$flood");
ok t_cmp($banned ? $banned->{refusals} : -1, 3, 'the refusals as banned on A are ranked on B too');

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
