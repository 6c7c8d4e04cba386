# The Redis Cluster client's core (src/core/hl_cluster.c; issue 28) against a
# real 3-master cluster on loopback (t/lib/HLCluster.pm), through the tiny
# client t/support/cluster_cli.c (hl_cluster.c + hiredis, built here), which
# runs 2-key scripts as the redis-cluster:// provider will:
# - the 1024 compiled-in bucket tags hash where Redis says (CLUSTER KEYSLOT);
# - 3000 client keys spread within 10 % of a third per master (DBSIZE);
# - a reshard of 1000 slots under load: every decision answered (MOVED and
#   ASK followed, NOSCRIPT answered with EVAL), the counters exact;
# - a stopped master (SIGSTOP): only its own keys fall back, the others are
#   all answered, and no decision waits much past the timeout.
# On main (0f9f2b3) there is no hl_cluster.c: the client does not build.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(sleep time);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis ();
use HLCluster ();

plan tests => 24,
    need { 'redis-server and redis-cli (apt-get install redis-server)' => HLRedis::available(),
           'hiredis headers (apt-get install libhiredis-dev)' => -e '/usr/include/hiredis/hiredis.h' };

my $src = "$FindBin::Bin/../src";
my $cli = Apache::Test::vars('t_logs') . "/cluster_cli-$$";
my $build = `cc -O1 -I$src/core -I$src/httpd $FindBin::Bin/support/cluster_cli.c $src/httpd/mod_hotlimit_cluster_slots.c $src/core/hl_cluster.c $src/core/hl_cluster_tags.c $src/core/hl_siphash.c $src/core/hl_breaker.c -lhiredis -o $cli 2>&1`;
ok t_cmp($?, 0, "t/support/cluster_cli.c builds with hl_cluster.c and hiredis") or t_debug($build);

my $cl = HLCluster->new('cluster', 3)->start;
my $seed = $cl->port(0);

# Runs the client; returns its first line's numbers, its per-port node
# lines and the read-back sum.
sub run_cli {
    my @args = @_;
    my $out = `$cli 127.0.0.1 $seed @args 2>&1`;
    t_debug("cluster_cli @args:\n$out");
    my %r = ($out =~ /^decisions/m ? (split ' ', (split /\n/, $out)[0]) : ());
    while ($out =~ /^node [^\s]+:(\d+) ok (\d+) fallback (\d+)$/mg) {
        $r{node}{$1} = { ok => $2, fallback => $3 };
    }
    ($r{sum}) = $out =~ /^sum (-?\d+)$/m;
    return \%r;
}

# 1. The tags.
my $tags = `$cli 127.0.0.1 $seed tags 2>&1`;
ok t_cmp($tags, qr/^tags 0$/m, 'every bucket tag {hl:B.S} is on slot 16 x B (CLUSTER KEYSLOT)');

# 2. The spread: 3000 clients, each decided at least once.
my $r = run_cli('run', 2, 3000, 200);
ok t_cmp($r->{decisions} >= 3000 ? 1 : 0, 1, "at least 3000 decisions ($r->{decisions})");
ok t_cmp($r->{fallback}, 0, 'no decision fell back');
ok t_cmp($r->{noscript}, 2, 'the two masters without the script cached said NOSCRIPT once each (EVAL there)');
ok t_cmp($r->{sum}, 2 * $r->{ok}, 'the counters read back: 2 per decision');
my @keys = map { $cl->dbsize($_) / 2 } 0 .. 2;
for my $i (0 .. 2) {
    ok t_cmp(($keys[$i] >= 900 && $keys[$i] <= 1100) ? 1 : 0, 1,
             "master $i holds $keys[$i] of the 3000 clients (within 10 % of a third)");
}

# 3. A reshard under load: 1000 slots from master 0 to master 2.
my $before = $r->{sum};
my $log = Apache::Test::vars('t_logs') . "/cluster-reshard-$$.out";
my $pid = fork // die "fork: $!";
if (!$pid) {
    exec "$cli 127.0.0.1 $seed run 6 3000 200 > $log 2>&1" or exit 127;
}
sleep 1;
my $t0 = time;
my $resh = eval { $cl->reshard(0, 2, 1000) } // "$@";
my $took = time - $t0;
waitpid $pid, 0;
my $out = HotLimitTable::_slurp($log) // '';
t_debug("reshard (${\ sprintf '%.2f', $took} s):\n" . substr($resh, -300) . "\ncluster_cli:\n$out");
my %m = $out =~ /^decisions/ ? split(' ', (split /\n/, $out)[0]) : ();
ok t_cmp($took < 5 ? 1 : 0, 1, 'the reshard ended while the client ran');
ok t_cmp($m{fallback} // -1, 0, "a reshard under load: 0 of $m{decisions} decisions fell back");
ok t_cmp(($m{moved} // 0) > 0 ? 1 : 0, 1, "MOVED was followed ($m{moved} times, ASK $m{ask}, TRYAGAIN $m{tryagain})");
my ($sum) = $out =~ /^sum (\d+)$/m;
ok t_cmp($sum, $before + 2 * ($m{ok} // 0), 'every counter moved with its slot: the total is exact');
my $layout = $cl->{nodes}[0]->cli('cluster', 'nodes');
t_debug("CLUSTER NODES:\n$layout");
my ($m2) = grep { /:${\ $cl->port(2)}\@/ } split /\n/, $layout;
my ($m0) = grep { /:${\ $cl->port(0)}\@/ } split /\n/, $layout;
ok t_cmp($m2 // '', qr/ 0-999( |$)/, 'master 2 now serves slots 0-999');
ok t_cmp($m0 // '', qr/ 1000-5460$/, 'master 0 keeps 1000-5460');

# 4. A slot half migrated by hand (CLUSTER SETSLOT, MIGRATE) holding one
# client's two keys: one key moved gives TRYAGAIN (retried twice, then
# the fallback), both moved give ASK (ASKING and the script on the
# target), the slot given to the target is served there.
my ($k1, $k2, $slot) = split ' ', `$cli 127.0.0.1 1 key 0`;
run_cli('run', 0, 1, 200);
my ($from) = grep { $cl->{nodes}[$_]->cli('get', $k1) !~ /MOVED/ } 0 .. 2;
my $to = ($from + 1) % 3;
my ($fid, $tid) = ($cl->id($from), $cl->id($to));
my ($fn, $tn) = ($cl->{nodes}[$from], $cl->{nodes}[$to]);
my $was = $fn->cli('get', $k1);
$tn->cli('cluster', 'setslot', $slot, 'importing', $fid);
$fn->cli('cluster', 'setslot', $slot, 'migrating', $tid);
$fn->cli('migrate', '127.0.0.1', $cl->port($to), $k1, 0, 5000);
$r = run_cli('run', 0, 1, 200);
ok t_cmp("$r->{fallback} $r->{tryagain}", '1 3',
         "one key of two migrated: TRYAGAIN, retried twice, then the fallback (slot $slot, master $from to $to)");
$fn->cli('migrate', '127.0.0.1', $cl->port($to), $k2, 0, 5000);
$r = run_cli('run', 0, 1, 200);
ok t_cmp("$r->{ok} $r->{ask} $r->{fallback}", '1 1 0', 'both migrated: ASK followed with ASKING, answered');
my @rest = map { "'$_'" } grep { length } split /\n/, $fn->cli('cluster', 'getkeysinslot', $slot, 1000);
$fn->cli('migrate', '127.0.0.1', $cl->port($to), "''", 0, 5000, 'keys', @rest) if @rest;
$_->cli('cluster', 'setslot', $slot, 'node', $tid) for $cl->nodes;
$r = run_cli('run', 0, 1, 200);
ok t_cmp("$r->{ok} $r->{fallback}", '1 0', 'the slot given to the target: answered there');
ok t_cmp($tn->cli('get', $k1), $was + 2, 'the counter moved with its slot and went on from there');

# 5. A stopped master: only its keys fall back.
$cl->pause(1);
my $stopped = $cl->port(1);
$r = run_cli('run', 3, 3000, 100);
$cl->resume(1);
my $own = $r->{node}{$stopped} // { ok => -1, fallback => -1 };
ok t_cmp($own->{ok}, 0, "the stopped master's keys: none answered");
ok t_cmp($own->{fallback} > 0 ? 1 : 0, 1, "they fell back ($own->{fallback})");
my ($others_ok, $others_fb) = (0, 0);
for my $p (grep { $_ != $stopped } keys %{ $r->{node} }) {
    $others_ok += $r->{node}{$p}{ok};
    $others_fb += $r->{node}{$p}{fallback};
}
ok t_cmp($others_fb, 0, "the other masters' keys: none fell back ($others_ok answered)");
ok t_cmp(($r->{max_ms} // 9999) <= 250 ? 1 : 0, 1,
         "no decision waited past 2 x the 100 ms timeout + 50 ms (longest $r->{max_ms} ms)");
ok t_cmp(HotLimitTable::wait_until(sub { $cl->state_ok }, 10) ? 1 : 0, 1, 'the cluster is ok again after SIGCONT');

$cl->stop;
