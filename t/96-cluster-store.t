# HotLimitStore redis-cluster:// (issue 28) against a real 3-master Redis
# Cluster on loopback (t/lib/HLCluster.pm): two httpd servers, one of each
# MPM (the other through hl_other_mpm), share quotas exactly through it;
# 3000 client keys spread within 10 % of a third per master; a request
# whose quota lines have different client keys (two slots, two masters)
# is refused as a whole and counted nowhere; the status page of either
# server lists the keys at their limit from every master; a reset reaches
# the master of the key; a prefix with '{' is a configuration error.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;
use HLCluster;
use HLConc;
use Time::HiRes qw(sleep);

plan tests => 26, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $cl = HLCluster->new('c96', 3)->start;
my $url = 'redis-cluster://' . $cl->addr(0) . ',' . $cl->addr(1);
my $conf = <<"CONF";
HotLimitStore $url
HotLimitStoreTimeout 200
<Location /shared>
    HotLimitQuota 10/1m by=header:X-Client
</Location>
<Location /spread>
    HotLimitQuota 10/1m by=header:X-Client
</Location>
<Location /lim>
    HotLimitQuota 2/1m by=header:X-Client
</Location>
SetEnvIf X-Key "^(.+)\$" hlkey=\$1
<Location /rc>
    HotLimitConcurrency 2 by=env:hlkey
</Location>
<Location /two>
    HotLimitQuota 5/1m by=header:X-Client
    HotLimitQuota 3/1m by=header:X-Other
</Location>
CONF
my %files = ('rc/f.txt' => "ok\n");
# A has HotLimitStoreLease too: it cannot lease under the cluster, and
# says so (HL03207) instead of silently ignoring it.
my $a = start_httpd(name => 'cluster-a', conf => "HotLimitStoreLease 10\n$conf", files => \%files);
my $b = start_httpd(name => 'cluster-b', conf => $conf, files => \%files, mpm => hl_other_mpm());

# 10/1m per client key, alternating servers: exactly 10 admitted per key.
for my $c (qw(alice bob carol)) {
    my @codes = map { ($_ % 2 ? $b : $a)->get('/shared', 'X-Client' => $c)->code } 0 .. 13;
    ok t_cmp(join(' ', @codes), join(' ', ('200') x 10, ('429') x 4),
             "$c: 10/1m shared exactly by two servers (" . hl_mpm() . ' and ' . hl_other_mpm() . ')');
}
ok t_cmp($a->metrics, qr/^hotlimit_store_up 1$/m, 'metrics: the store is up');
ok t_cmp(scalar(grep { /HL03207: HotLimitStoreLease 10 has no effect with/ } $a->log_lines(0)), 1,
         'HotLimitStoreLease under redis-cluster:// is a warning (HL03207), once');
ok t_cmp($a->metrics, qr/^hotlimit_store_fallbacks_total 0$/m, '... no fallback');

# 3000 client keys: within 10 % of a third per master.
sub spread_keys { scalar grep { /spread/ } split /\n/, $cl->{nodes}[$_[0]]->cli('--scan', '--pattern', "'hl:{hl:*}:*spread*'") }
my $before = [ map { spread_keys($_) } 0 .. 2 ];
my $bad = 0;
for my $i (1 .. 3000) {
    $bad++ unless ($i % 2 ? $a : $b)->get('/spread', 'X-Client' => "k$i")->code == 200;
}
ok t_cmp($bad, 0, '3000 client keys admitted');
# Counter keys only: the status view's keys ({hl}:view:ID) come and go.
my @per = map { spread_keys($_) - $before->[$_] } 0 .. 2;
my $sum = 0;
$sum += $_ for @per;
ok t_cmp($sum, 3000, "one key per client in the cluster (@per)");
ok t_cmp(scalar(grep { abs($_ - 1000) <= 100 } @per), 3, "each master within 10 % of a third (@per)");
print STDERR "# 3000 client keys per master: @per\n";

# Keys at their limit on every master, listed by both servers' pages.
my @lim = map { "l$_" } 1 .. 12;
for my $c (@lim) { $a->get('/lim', 'X-Client' => $c) for 1 .. 3 }
my %masters;
for my $i (0 .. 2) {
    my $keys = $cl->{nodes}[$i]->cli('--scan', '--pattern', "'hl:{hl:*}:limited'");
    $masters{$i} = 1 if $keys =~ /limited/;
}
ok t_cmp(scalar(keys %masters), 3, 'per-bucket lists of keys at their limit on all 3 masters');
my @took;
for my $h ($a, $b) {
    my $t0 = Time::HiRes::time();
    my $st = $h->status;
    push @took, sprintf '%.3f', Time::HiRes::time() - $t0;
    my @listed = grep { $_->{key} =~ m{^/lim\|} } @{ $st->{limited_keys} || [] };
    ok t_cmp(scalar(@listed), 12, "the status page lists all 12 keys at their limit from every master ($took[-1] s)");
}
print STDERR "# status page with the listing of 1024 buckets on 3 masters: @took s\n";

# A refused client carries a refused-until note (per thread): a flood of
# 60 refused requests does not cost 60 script calls on the cluster.
$cl->{nodes}[$_]->cli('CONFIG', 'RESETSTAT') for 0 .. 2;
my $flood = join ' ', map { $a->get('/lim', 'X-Client' => 'flood')->code } 1 .. 62;
my $calls = 0;
for my $i (0 .. 2) {
    my $st = $cl->{nodes}[$i]->cli('INFO', 'commandstats');
    $calls += HLRedis::script_calls($st);
}
ok t_cmp($flood =~ /^200 200( 429){60}$/ && $calls <= 30 ? 'yes' : "$calls calls",
         'yes', "62 requests of one client (2/1m): 60 refused with $calls script calls");

# Two client keys, two buckets: refused by one line, counted by neither.
# X-Other "o" allows 3; X-Client "p" 5: the 4th request is refused by the
# second line, and the first line must not have counted it.
my $two = join ' ', map { ($_ % 2 ? $b : $a)->get('/two', 'X-Client' => 'p', 'X-Other' => 'o')->code } 1 .. 4;
ok t_cmp($two, '200 200 200 429', 'two lines in two slots: 3/1m refuses the 4th');
my $p = join ' ', map { $a->get('/two', 'X-Client' => 'p', 'X-Other' => "o$_")->code } 1 .. 3;
ok t_cmp($p, '200 200 429', '... and the refused one was given back by 5/1m (3 + 2 admitted, not 3 + 1)');
my @twokeys = map { split /\n/, $cl->{nodes}[$_]->cli('--scan', '--pattern', "'hl:{hl:*}:d0/two*'") } 0 .. 2;
my ($ptag) = map { /^hl:\{([^}]+)\}:d0\/two\|/ ? $1 : () } @twokeys;
my @otags = map { /^hl:\{([^}]+)\}:d0\/two#2\|/ ? $1 : () } @twokeys;
ok t_cmp(defined $ptag && @otags == 3 && !grep({ $_ eq $ptag } @otags) ? 'apart' : "p=@{[ $ptag // '?' ]} o=@otags",
         'apart', '... the two lines of each request were in different buckets (slots; o3 never asked: p refused first)');

# A reset on A reaches the masters: the keys at their limit (alice, bob
# and carol on /shared: their hashed keys, as the page lists them) are
# free on B at once.
my @shared = map { $_->{key} } grep { $_->{key} =~ m{^/shared\|} } @{ $b->status->{limited_keys} || [] };
ok t_cmp(scalar(@shared), 3, 'the 3 /shared keys at their limit are listed');
$a->{ua}->post($a->url('/hotlimit-status'), [ reset => $_, back => 1 ],
               Origin => 'http://127.0.0.1:' . $a->port, 'Sec-Fetch-Site' => 'same-origin') for @shared;
ok t_cmp(join(' ', map { $b->get('/shared', 'X-Client' => $_)->code } qw(alice bob carol)),
         '200 200 200', 'a reset on A frees the keys on B');

# HotLimitConcurrency through the cluster: at most 2 requests of key K in
# flight on both servers together; the set lives on one master, its
# expiry refreshed while the requests run; a slot comes back at the end.
sub conc_sets { map { my $i = $_; map { [ $i, $_ ] } grep { /conc:/ } split /\n/,
                      $cl->{nodes}[$i]->cli('--scan', '--pattern', "'hl:{hl:*}:conc:*'") } 0 .. 2 }
sub conc_held { my @s = conc_sets(); @s ? 0 + $cl->{nodes}[$s[0][0]]->cli('ZCARD', "'$s[0][1]'") : 0 }
my $ha = hl_hold($a->port, '/rc/f.txt', 'K');
my $hb = hl_hold($b->port, '/rc/f.txt', 'K');
ok t_cmp(HotLimitTable::wait_until(sub { conc_held() == 2 }, 5) ? scalar(conc_sets()) : 'not 2 held', 1,
         'concurrency: one request of K in flight on each server, two slots in one set on one master');
ok t_cmp(join(' ', map { $_->get('/rc/f.txt', 'X-Key' => 'K')->code } $a, $b), '429 429',
         '... a third on either server: 429');
my ($cs) = conc_sets();
my @m = split /\n/, $cl->{nodes}[$cs->[0]]->cli('ZRANGE', "'$cs->[1]'", 0, -1, 'WITHSCORES');
my $score0 = $m[1] // 0;
sleep 5.6;      # past one refresh (every 5 s)
@m = split /\n/, $cl->{nodes}[$cs->[0]]->cli('ZRANGE', "'$cs->[1]'", 0, -1, 'WITHSCORES');
ok t_cmp(($m[1] // 0) > $score0 ? 1 : 0, 1, "... a held slot's expiry is refreshed on its master while its request runs");
ok t_cmp(hl_finish($ha), 200, "... server A's request completes");
ok t_cmp(HotLimitTable::wait_until(sub { conc_held() == 1 }, 5) ? 1 : 0, 1, '... its slot is given back on the master');
ok t_cmp($b->get('/rc/f.txt', 'X-Key' => 'K')->code, 200, '... and B admits K again');
close $hb;

# A prefix with '{' is refused at configuration time.
my $bad_h = start_httpd(name => 'cluster-badprefix', start => 0, conf => <<"CONF");
HotLimitStore $url?prefix=x{y}:
CONF
my $out = `${\ Apache::Test::vars('httpd')} -t -f '$bad_h->{conf_file}' 2>&1`;
ok t_cmp($out, qr/prefix 'x\{y\}:' holds '\{'/, "a prefix with '{' is a configuration error");
ok t_cmp(`${\ Apache::Test::vars('httpd')} -t -f '$bad_h->{conf_file}' 2>&1; echo \$?`, qr/^[1-9]\d*$/m, '... httpd -t fails');
