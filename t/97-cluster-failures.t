# HotLimitStore redis-cluster:// (issue 28) through the cluster's failures,
# on a real 3-master cluster on loopback (t/lib/HLCluster.pm), two httpd
# servers (both MPMs):
# - a reshard (redis-cli --cluster reshard of 4000 slots, in the background)
#   while requests flow stays exact: every client key admitted exactly its
#   limit, no 5xx (MOVED and ASK followed);
# - a paused (SIGSTOP) master: the keys it serves fall back to the local
#   counters (HL03200, the fallback figures; still limited per server),
#   no request waits much past HotLimitStoreTimeout, and keys on the other
#   masters are still decided by the cluster (shared by the two servers).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use POSIX ();
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;
use HLCluster;

plan tests => 16, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $cl = HLCluster->new('c97', 3)->start;
my $url = 'redis-cluster://' . $cl->addr(0) . ',' . $cl->addr(1) . ',' . $cl->addr(2);
my $timeout_ms = 200;
my $conf = <<"CONF";
HotLimitStore $url
HotLimitStoreTimeout $timeout_ms
<Location /rs>
    HotLimitQuota 10/1m by=header:X-Client
</Location>
<Location /probe>
    HotLimitQuota 100/1m by=header:X-Client
</Location>
<Location /f>
    HotLimitQuota 10/1m by=header:X-Client
</Location>
<Location /g>
    HotLimitQuota 10/1m by=header:X-Client
</Location>
CONF
my $a = start_httpd(name => 'cl97-a', conf => $conf,
                    env => { HOTLIMIT_TEST_BREAKER_MAX_MS => 300 });
my $b = start_httpd(name => 'cl97-b', conf => $conf, mpm => hl_other_mpm(),
                    env => { HOTLIMIT_TEST_BREAKER_MAX_MS => 300 });

# ---- a reshard under load -----------------------------------------------
my @keys = map { "r$_" } 1 .. 80;
my (%ok, %codes);
my ($pid, $during, $rc) = (0, 0);
for my $round (1 .. 12) {
    if ($round == 2) {      # the reshard runs while rounds 2.. go on
        $pid = fork // die "fork: $!";
        if (!$pid) {
            eval { $cl->reshard(0, 2, 4000) };
            POSIX::_exit($@ ? 1 : 0);
        }
    }
    for my $i (0 .. $#keys) {
        my $code = (($i + $round) % 2 ? $b : $a)->get('/rs', 'X-Client' => $keys[$i])->code;
        $codes{$code}++;
        if ($pid && !defined $rc && waitpid($pid, POSIX::WNOHANG()) == $pid) { $rc = $? }
        $during++ if $pid && !defined $rc;
        $ok{ $keys[$i] }++ if $code == 200;
    }
}
if (!defined $rc) { waitpid $pid, 0; $rc = $? }
ok t_cmp($rc, 0, 'redis-cli --cluster reshard of 4000 slots succeeded');
ok t_cmp($during > 100 ? 'yes' : $during, 'yes', "... with requests flowing ($during while it ran)");
ok t_cmp(join(' ', map { "$_=$codes{$_}" } sort keys %codes), '200=800 429=160',
         'during the reshard: 80 keys x 12 requests, exactly 10 admitted per key, no 5xx');
ok t_cmp(scalar(grep { ($ok{$_} // 0) != 10 } @keys), 0, '... every key exactly its limit (10)');
my @fb = map { ($_->metrics =~ /^hotlimit_store_fallbacks_total (\d+)$/m)[0] // 'none' } $a, $b;
ok t_cmp("@fb", '0 0', 'the redirects were followed: no decision fell back during the reshard');
my @rs = map { scalar(() = $cl->{nodes}[$_]->cli('--scan', '--pattern', "'hl:{hl:*}:d0/rs|*'") =~ /\n|.\z/g) } 0 .. 2;
ok t_cmp("total " . ($rs[0] + $rs[1] + $rs[2]) . ($rs[2] > $rs[1] + 15 ? ', most on master 2' : ''),
         'total 80, most on master 2', "... the 80 counters, moved to master 2 with their slots (@rs)");

# ---- a paused master -------------------------------------------------------
# Which master holds which probe key: one request each, watching each
# master's count of /probe counters (not DBSIZE: the status view's keys
# come and go on their own).
sub probe_keys { scalar grep { /probe/ } split /\n/, $cl->{nodes}[$_[0]]->cli('--scan', '--pattern', "'hl:{hl:*}:*probe*'") }
my (%on, @size);
@size = map { probe_keys($_) } 0 .. 2;
for my $k (map { "p$_" } 1 .. 30) {
    $a->get('/probe', 'X-Client' => $k);
    for my $i (0 .. 2) {
        my $now = probe_keys($i);
        if ($now != $size[$i]) { $on{$k} = $i; $size[$i] = $now }
    }
}
my @down = grep { $on{$_} == 1 } sort keys %on;
my @up = grep { defined $on{$_} && $on{$_} != 1 } sort keys %on;
ok t_cmp(@down >= 2 && @up >= 2 ? 'yes' : "down=@down up=@up", 'yes', 'probe keys found on master 1 and on the others');

$cl->pause(1);
my $off_a = -s $a->error_log;
my $slowest = 0;
my %c;
my $path = '/f';
# Sends $n requests for key $k, alternating A and B when $both; returns
# their codes, recording the slowest.
sub burst {
    my ($k, $n, $both) = @_;
    my @codes;
    for my $j (1 .. $n) {
        my $t0 = time;
        push @codes, (($both && $j % 2) ? $b : $a)->get($path, 'X-Client' => $k)->code;
        $slowest = time - $t0 if time - $t0 > $slowest;
    }
    return join ' ', @codes;
}
my $want = join ' ', ('200') x 10, ('429') x 2;
ok t_cmp(burst($down[0], 12, 0), $want, "a key on the paused master: decided by A's local counters (10/1m)");
ok t_cmp(burst($up[0], 12, 1), $want, 'a key on another master: still shared exactly by A and B');
ok t_cmp(burst($up[1], 12, 1), $want, '... and another');
ok t_cmp(burst($down[1], 6, 1), '200 200 200 200 200 200', 'a second key on the paused master: admitted locally');
ok t_cmp(sprintf('%.3f', $slowest) < $timeout_ms / 1000 + 0.25 ? 'bounded' : sprintf('%.3f s', $slowest),
         'bounded', sprintf('no request waits past HotLimitStoreTimeout (%d ms; slowest %.3f s)', $timeout_ms, $slowest));
ok t_cmp(join('', $a->log_lines($off_a)), qr/HL03200: Redis Cluster master 127\.0\.0\.1:${\ $cl->port(1)} unavailable/,
         'HL03200 names the paused master');
my ($fb) = $a->metrics =~ /^hotlimit_store_fallbacks_total (\d+)$/m;
ok t_cmp(($fb // 0) >= 10 ? 'yes' : $fb // 'none', 'yes', "the fallbacks are counted (hotlimit_store_fallbacks_total $fb)");

# The master comes back: once a probe from each server found it (the
# backoff is cut to 300 ms for the test), its keys are shared again.
$cl->resume(1);
my $back = HotLimitTable::wait_until(sub {
    $_->get('/probe', 'X-Client' => $down[0]) for $a, $b;
    return $a->metrics =~ /^hotlimit_store_up 1$/m && $b->metrics =~ /^hotlimit_store_up 1$/m;
}, 15);
ok t_cmp(join('', $a->log_lines($off_a)), qr/HL03201: Redis Cluster master 127\.0\.0\.1:${\ $cl->port(1)} answers again/,
         'the master answers again: HL03201, both servers up');
$path = '/g';
ok t_cmp(burst($down[0], 12, 1), $want, "... and its keys are shared exactly by A and B again");
print STDERR "# reshard: $during requests while it ran; slowest request with a paused master: ",
    sprintf('%.3f', $slowest), " s\n";
