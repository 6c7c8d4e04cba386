# HotLimitStore redis-sentinel:// (issue 28) against real servers on
# loopback: a master, its replica and 3 Sentinels. The quota counts exactly
# through the master the Sentinels name; the master is killed (-9) under a
# steady trickle of requests, the Sentinels promote the replica, and the
# module finds the new master by asking them again: counting goes on there
# (keys written on it), with no 5xx and no request waiting long (while no
# master answers, HotLimitStoreFailure local decides without waiting).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;

plan tests => 16, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $name = 'hlm';
my $master = HLRedis->new('sent-master')->start;
my $replica = HLRedis->new('sent-replica', '--replicaof', '127.0.0.1', $master->port)->start;
my @sentinels = map { HLRedis->sentinel("sent-s$_", $name, $master->port)->start } 1 .. 3;
my $s1 = $sentinels[0];
sub master_port { ($s1->cli('SENTINEL', 'get-master-addr-by-name', $name) =~ /(\d+)\s*$/)[0] // 0 }
# Ready when the replica is in sync and every Sentinel knows the replica
# and the other two (a failover needs a majority to elect a leader).
HotLimitTable::wait_until(sub {
    $replica->cli('INFO', 'replication') =~ /master_link_status:up/
        && !grep { $_->cli('SENTINEL', 'ckquorum', $name) !~ /OK 3 usable/
                   || $_->cli('SENTINEL', 'replicas', $name) !~ /\b${\ $replica->port}\b/ } @sentinels
}, 30) or die "the Sentinels do not see the master, the replica and each other\n";

my $url = "redis-sentinel://$name\@" . join(',', map { '127.0.0.1:' . $_->port } @sentinels);
my $h = start_httpd(name => 'sentinel', conf => <<"CONF");
HotLimitStore $url
HotLimitStoreTimeout 200
<Location /q>
    HotLimitQuota 5/1m
</Location>
<Location /t>
    HotLimitQuota 100000/1h
</Location>
<Location /n>
    HotLimitQuota 3/1m
</Location>
<Location /m>
    HotLimitQuota 3/1m
</Location>
CONF

ok t_cmp(master_port(), $master->port, 'the Sentinels name the first master');
ok t_cmp($h->codes('/q', 6), '200 200 200 200 200 429', '5/1m counts exactly through the master');
ok t_cmp((split ' ', $master->cli('GET', "'hl:{hl}:d0/q|127.0.0.1'"))[1] // '', '5',
         '... the counter is on the master (5)');

# Kill the master under a trickle of requests until the replica is promoted
# and the module counts there again.
my $offset = -s $h->error_log;
my $mpid = HotLimitTable::_slurp($master->dir . '/redis.pid');
chomp $mpid;
kill 'KILL', $mpid;
my ($promoted, %codes, $n, $slowest);
# Sends a request to /t every 50 ms, recording its status and time, until
# $done returns true (checked after each) or 45 s passed.
sub trickle {
    my ($done) = @_;
    %codes = ();
    ($n, $slowest) = (0, 0);
    my $until = time + 45;
    while (time < $until) {
        my $t0 = time;
        $codes{ $h->get('/t')->code }++;
        $n++;
        $slowest = time - $t0 if time - $t0 > $slowest;
        return 1 if $done->();
        sleep 0.05;
    }
    return 0;
}
# Returns a done-check for trickle: true once $srv is the master and has
# counted each of the last 10 requests (every child on it, none deciding
# locally after a breaker another child opened).
sub counting_on {
    my ($srv) = @_;
    my ($prev, $streak) = (-1, 0);
    return sub {
        # redis-cli may print an error instead of the value while the
        # server changes role: only "T C P" is a count.
        my ($c) = ($srv->cli('GET', "'hl:{hl}:d0/t|127.0.0.1'") // '') =~ /^-?\d+ (\d+)/;
        $c //= 0;
        $streak = $c == $prev + 1 ? $streak + 1 : 0;
        $prev = $c;
        return $streak >= 10 && master_port() == $srv->port;
    };
}
trickle(counting_on($replica));
$promoted = master_port() == $replica->port;
t_debug("after the kill: $n requests, codes " . join(' ', map { "$_=$codes{$_}" } sort keys %codes)
        . ", slowest ${slowest}s");
ok t_cmp($promoted, 1, 'the Sentinels promote the replica');
ok t_cmp(scalar(grep { /HL00702/ } $h->log_lines($offset)) >= 1 ? 1 : 0, 1,
         'the module counts in Redis again (HL00702)');
ok t_cmp(scalar(grep { $_ >= 500 } keys %codes), 0, "no 5xx during the failover ($n requests)");
ok t_cmp($codes{200} // 0, $n, '... every one admitted (HotLimitStoreFailure local meanwhile)');
ok t_cmp($slowest < 1.0 ? 1 : 0, 1, "no request waited past the timeouts (slowest ${slowest}s)");
my $rp = $replica->port;
ok t_cmp(scalar(grep { /HL02801: .* to 127\.0\.0\.1:$rp / } $h->log_lines($offset)) >= 1 ? 1 : 0, 1,
         'the move to the new master is logged (HL02801)');

# Counting goes on with the new master: a fresh quota counts exactly there.
ok t_cmp($h->codes('/n', 4), '200 200 200 429', '3/1m counts exactly after the failover');
ok t_cmp((split ' ', $replica->cli('GET', "'hl:{hl}:d0/n|127.0.0.1'"))[1] // '', '3',
         '... on the new master (the promoted replica)');

# The old master returns, empty; the Sentinels make it a replica of the new
# one. A manual failover then promotes it again while the other still runs.
$master->start;
HotLimitTable::wait_until(sub {
    $master->cli('INFO', 'replication') =~ /role:slave.*master_link_status:up/s
        && !grep { $_->cli('SENTINEL', 'replicas', $name) !~ /\b${\ $master->port}\b/ } @sentinels
}, 30) or die "the old master does not rejoin as a replica\n";
$offset = -s $h->error_log;
$s1->cli('SENTINEL', 'FAILOVER', $name);
my $mp = $master->port;
trickle(counting_on($master));
t_debug("manual failover: $n requests, codes " . join(' ', map { "$_=$codes{$_}" } sort keys %codes)
        . ", slowest ${slowest}s");
ok t_cmp(master_port(), $mp, 'a manual failover promotes the first server again');
ok t_cmp(scalar(grep { /HL02801: .* to 127\.0\.0\.1:$mp / } $h->log_lines($offset)) >= 1 ? 1 : 0, 1,
         '... and the module follows it (HL02801)');
ok t_cmp(scalar(grep { $_ >= 500 } keys %codes), 0, "no 5xx meanwhile ($n requests)");
ok t_cmp($h->codes('/m', 4), '200 200 200 429', '3/1m counts exactly on the master of now');
ok t_cmp((split ' ', $master->cli('GET', "'hl:{hl}:d0/m|127.0.0.1'"))[1] // '', '3',
         '... on it');
