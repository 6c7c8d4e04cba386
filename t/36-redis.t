# The Redis store (spec section 6): two httpd servers sharing one quota
# through a real redis-server on loopback count exactly; a refused request
# counts in no window; one script call per decided request; the script
# cache heals after SCRIPT FLUSH; with Redis stopped no request waits much
# longer than HotLimitStoreTimeout, nothing fails, and the local counters
# keep limiting (HotLimitStoreFailure local) or 503 (closed); when Redis
# comes back, counting is shared again within a few seconds.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use POSIX ();
use List::Util ();
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLTest ();
use HLRedis;

plan tests => 44, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $redis = HLRedis->new('redis');
my $rport = $redis->port;
sub redis_start { $redis->start }
sub redis_stop { $redis->stop }
sub cli { $redis->cli(@_) }

redis_start();
my $conf = <<"CONF";
HotLimitStore redis://127.0.0.1:$rport
@{[ $redis->secret_conf ]}HotLimitStoreTimeout 50
<Location /shared>
    HotLimitQuota 20/1m
</Location>
<Location /two>
    HotLimitQuota 5/1m 30/1h
</Location>
<Location /flush>
    HotLimitQuota 5/1m
</Location>
<Location /drn>
    HotLimitQuota 1/1m
</Location>
<Location /drn/sub>
    HotLimitDryRun On
</Location>
<Location /down>
    HotLimitQuota 10/1m
</Location>
<Location /again>
    HotLimitQuota 10/1m
</Location>
<Location /closed>
    HotLimitQuota 10/1m
</Location>
<Location /burst>
    HotLimitQuota 30/1m by=header:X-Client
</Location>
<Location /pause>
    HotLimitQuota 100/1m
</Location>
<Location /grace>
    HotLimitQuota 40/1m by=header:X-Client
</Location>
<Location /twoq>
    HotLimitQuota 3/1m
    HotLimitQuota 2/1m by=header:X-Account
</Location>
CONF
# The breaker's backoff (250 ms doubling to 5 s) is cut to 300 ms for
# this test (HOTLIMIT_TEST_BREAKER_MAX_MS), so it waits out 0.5 s, not 6.
my %env = (env => { HOTLIMIT_TEST_BREAKER_MAX_MS => 300 });
my $a = start_httpd(name => 'redis-a', conf => $conf, %env);
# The second server runs the other MPM when this run has it (prefork with
# mod_php and event, as a mixed farm would).
my $b = start_httpd(name => 'redis-b', conf => $conf, mpm => hl_other_mpm(), %env);
t_debug('second server MPM: ' . hl_other_mpm());

# --- two servers, one quota: exactly 20 of 40 alternating -----------------------
my %seen;
for my $i (1 .. 40) {
    my $h = $i % 2 ? $a : $b;
    $seen{ $h->get('/shared')->code }++;
}
ok t_cmp($seen{200} // 0, 20, 'two servers share one quota: 20 of 40 admitted');
ok t_cmp($seen{429} // 0, 20, '... and 20 refused');

# --- two HotLimitQuota lines in one section, decided in one script call ---------
ok t_cmp(join(' ', map { ($_->[0])->get('/twoq', 'X-Account' => $_->[1])->code }
                   [$a, 'x'], [$b, 'x'], [$a, 'x'], [$b, 'y'], [$a, 'z']),
         '200 200 429 200 429',
         'two quotas on two servers: account x gets 2, the address 3, both bind');

# --- 50 concurrent clients alternating between the servers: exactly 30 ------------
{
    my %burst;
    for my $round (1 .. 2) {
        my $res = HLTest::hl_hammer(port => ($round == 1 ? $a : $b)->port, path => '/burst',
                                    total => 50, conc => 50, headers => "X-Client: one\r\n");
        $burst{$_} += $res->{$_} for keys %$res;
    }
    ok t_cmp($burst{200} // 0, 30, '100 requests from 50 concurrent clients on two servers: exactly 30 admitted');
    ok t_cmp(($burst{0} // 0) + scalar(grep { $_ >= 500 } keys %burst), 0, '... no failed connection, no 5xx');

    # The threads of a child share one connection (commands that meet in
    # time leave in one write): Redis sees at most one client per httpd
    # child, not one per thread that decided.
    my $children = 0;
    for my $srv ($a, $b) {
        my @kids = grep { /^\d+$/ } split /\s+/, `pgrep -P ${\ $srv->pid}`;
        $children += @kids;
    }
    my ($clients) = cli('INFO', 'clients') =~ /connected_clients:(\d+)/;
    ok t_cmp($clients - 1 <= $children ? 1 : 0, 1,
             "one Redis connection per httpd child: " . ($clients - 1) . " connections, $children children");
}

# --- a graceful restart of one server under load: exact, no errors ------------------
{
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        my %res;
        for my $round (1 .. 4) {
            my $part = HLTest::hl_hammer(port => ($round % 2 ? $a : $b)->port, path => '/grace',
                                         total => 30, conc => 10, headers => "X-Client: g\r\n");
            $res{$_} += $part->{$_} for keys %$part;
        }
        print {$w} join(' ', map { "$_=$res{$_}" } sort keys %res), "\n";
        close $w;
        POSIX::_exit(0);
    }
    close $w;
    sleep 0.3;
    kill 'USR1', $a->pid;
    my $line = <$r> // '';
    waitpid $pid, 0;
    my %res = map { split /=/ } split ' ', $line;
    ok t_cmp($res{200} // 0, 40, "graceful restart under load: exactly 40 of 120 admitted ($line)");
    ok t_cmp(($res{0} // 0) + scalar(grep { $_ >= 500 } keys %res), 0, '... no failed connection, no 5xx');
}

# --- a refused request counts in no window ----------------------------------------
cli('CONFIG RESETSTAT');
my $codes = join ' ', map { ($_ % 2 ? $a : $b)->get('/two')->code } 1 .. 8;
ok t_cmp($codes, '200 200 200 200 200 429 429 429', 'two windows: 5 of 5/1m');
my @keys = split /\n/, cli('--scan', '--pattern', "'hl:{hl}:d1/two*'");
ok t_cmp(scalar(@keys), 1, 'the 30/1h window has its key');
ok t_cmp((split ' ', cli('GET', "'$keys[0]'"))[1] // '', '5', 'the 30/1h window counted 5, not 8');

# --- one script call per decided request ------------------------------------------
my $stats = cli('INFO', 'commandstats');
my $calls = HLRedis::script_calls($stats);
my $evals = 0;
# Refused requests of the same client are answered from the refused-until
# note without a round trip, so calls <= 8.
ok t_cmp(($calls // 0) + ($evals // 0) <= 8 && ($calls // 0) + ($evals // 0) >= 6 ? 1 : 0, 1,
         'one script call per decided request at most (' . (($calls // 0) + ($evals // 0)) . ' for 8)');

# --- a dry run never refuses, not even from a refused-until note ----------------
# One connection (one thread): /drn refused leaves a note on its counter;
# /drn/sub counts under the same counter in dry run and is admitted.
{
    my $req = join '', map { "GET $_ HTTP/1.1\r\nHost: localhost\r\n\r\n" } '/drn/x', '/drn/x';
    $req .= "GET /drn/sub/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    my @codes = (HLTest::hl_raw($a->port, $req) // '') =~ m{^HTTP/1\.1 (\d{3})}mg;
    ok t_cmp("@codes", '200 429 200', 'dry run under a refused counter: admitted (no note answers it)');
}

# --- SCRIPT FLUSH heals ---------------------------------------------------------------
cli('SCRIPT', 'FLUSH');
ok t_cmp($a->get('/flush')->code, 200, 'after SCRIPT FLUSH a request is answered');
ok t_cmp(cli('--scan', '--pattern', "'hl:{hl}:d0/flush*'") =~ /flush/ ? 1 : 0, 1,
         '... and counted in Redis (the script was loaded again)');

# --- Redis paused (SIGSTOP, 1.5 s): requests wait no longer than the timeout ---------
# (DEBUG SLEEP would do, but Redis 7 refuses DEBUG unless enable-debug-command.)
{
    my ($rpid) = (HotLimitTable::_slurp($redis->dir . '/redis.pid') // '') =~ /(\d+)/;
    my ($before) = ($a->metrics =~ /^hotlimit_store_fallbacks_total (\d+)$/m, 0);
    my $t0 = time;
    kill 'STOP', $rpid if $rpid;
    my %codes;
    my $off = $a->access_offset;
    $codes{ $a->get('/pause')->code }++ for 1 .. 10;
    sleep 1.5 - (time - $t0) if time - $t0 < 1.5;
    kill 'CONT', $rpid if $rpid;
    my ($after) = ($a->metrics =~ /^hotlimit_store_fallbacks_total (\d+)$/m, 0);
    ok t_cmp($after - $before >= 10 ? 1 : 0, 1, "Redis paused: the 10 requests were decided by the fallback ("
             . ($after - $before) . ')');
    # How long httpd took (%D), not how long this client waited on a busy
    # machine: the bound is on what the module makes a request wait.
    my $slow = List::Util::max($a->took_since($off, qr{^GET /pause }, 10));
    ok t_cmp(($slow // 9) < 0.5 ? 1 : 0, 1, sprintf('Redis paused 1.5 s: the slowest request took %.3f s', $slow // -1));
    ok t_cmp(scalar(grep { $_ >= 500 } keys %codes), 0, 'Redis paused: no 5xx');
}
ok t_cmp(scalar(grep { /HL02900: the Redis breaker's backoff is cut to 300 ms/ } $a->log_lines(0)) ? 1 : 0, 1,
         '(the test-only backoff cap is in force)');
sleep 0.5;   # the breaker's backoff (at most 300 ms + 20 %) ends; the next request probes

# --- CLIENT KILL of every client: reconnects, bounded ---------------------------------
# (as a Sentinel does to a master it demotes, and a restart to everyone): a
# connection the server closed is made anew before a command goes out on
# it, so the breaker stays closed and nothing falls back.
{
    my $up = wait_until(sub { $a->get('/pause'); $a->metrics =~ /^hotlimit_store_up 1$/m }, 10);
    my ($fb_before) = ($a->metrics =~ /^hotlimit_store_fallbacks_total (\d+)$/m, 0);
    my $log_before = -s $a->error_log;
    my ($before) = cli('INFO', 'stats') =~ /total_connections_received:(\d+)/;
    cli('CLIENT', 'KILL', 'TYPE', 'normal');
    my %codes;
    $codes{ ($_ % 2 ? $a : $b)->get('/burst')->code }++ for 1 .. 20;
    my ($after) = cli('INFO', 'stats') =~ /total_connections_received:(\d+)/;
    my ($fb_after) = ($a->metrics =~ /^hotlimit_store_fallbacks_total (\d+)$/m, 0);
    ok t_cmp($up && $fb_after == $fb_before ? 1 : 0, 1,
             "CLIENT KILL: every request still counted in Redis (fallbacks $fb_before -> $fb_after)");
    ok t_cmp(scalar(grep { /HL00701/ } $a->log_lines($log_before)), 0, 'CLIENT KILL: no outage logged (HL00701)');
    ok t_cmp(scalar(grep { $_ >= 500 } keys %codes), 0, 'CLIENT KILL: no 5xx');
    ok t_cmp(($after // 0) - ($before // 0) <= 40 ? 1 : 0, 1,
             'CLIENT KILL: ' . (($after // 0) - ($before // 0)) . ' reconnects for 20 requests (at most one per thread)');
}

# --- Redis stopped: bounded waits, no errors, local limits ------------------------
my $down_log = -s $a->error_log;
redis_stop();
t_debug('redis after stop: ' . cli('ping'));
my %down;
my $down_off = $a->access_offset;
$down{ $a->get('/down')->code }++ for 1 .. 30;
my $slowest = List::Util::max($a->took_since($down_off, qr{^GET /down }, 30));
ok t_cmp(($slowest // 9) < 0.5 ? 1 : 0, 1, sprintf('Redis down: the slowest request took %.3f s (httpd\'s time)', $slowest // -1));
ok t_cmp(scalar(grep { $_ >= 500 } keys %down), 0, 'Redis down: no 5xx with HotLimitStoreFailure local');
ok t_cmp(($down{200} // 0) == 10 && ($down{429} // 0) == 20 ? 1 : 0, 1,
         'Redis down: the local counters still limit (' . join(', ', map { "$_=$down{$_}" } sort keys %down) . ')');
ok t_cmp(scalar(grep { /HL00701/ } $a->log_lines($down_log)), 1, 'the outage is logged once (HL00701)');
{
    my $m = $a->metrics;
    ok t_cmp($m, qr/^hotlimit_store_up 0$/m, 'metrics: hotlimit_store_up 0 while Redis is down');
    my ($fb) = $m =~ /^hotlimit_store_fallbacks_total (\d+)$/m;
    ok t_cmp(($fb // 0) >= 1 ? 1 : 0, 1, "metrics: $fb fallback decisions counted");
}

# --- Redis back: shared again within a few seconds ----------------------------------
redis_start();
my $back = wait_until(sub {
    $a->get('/again');
    sleep 0.2;
    cli('--scan', '--pattern', "'hl:{hl}:*again*'") =~ /again/;
}, 20);
t_debug(join "\n", 'redis-a store lines:', grep { /HL007/ } $a->log_lines(0)) unless $back;
t_debug($a->metrics) unless $back;
ok t_cmp($back ? 1 : 0, 1, 'Redis back: counting there again within 20 s');
ok t_cmp(scalar(grep { /HL00702/ } $a->log_lines(0)) >= 1 ? 1 : 0, 1, 'the recovery is logged (HL00702)');
ok t_cmp($a->metrics, qr/^hotlimit_store_up 1$/m, 'metrics: hotlimit_store_up 1 again');

# --- a ban started on one server keeps the client out of the other ----------------
{
    my $ban_conf = <<"BAN";
HotLimitStore redis://127.0.0.1:$rport
@{[ $redis->secret_conf ]}HotLimitBan 3/1m 5s
<Location /banq>
    HotLimitQuota 1/1m
</Location>
<Location /many>
    HotLimitQuota 1/1h by=header:X-K
</Location>
BAN
    my $d = start_httpd(name => 'redis-ban-d', conf => $ban_conf, %env);
    my $e = start_httpd(name => 'redis-ban-e', conf => $ban_conf, mpm => hl_other_mpm(), %env);
    # 210 other keys at their limit, each outlasting the ban by far, and the
    # list of keys at their limit filled past its bound of 10,000 with
    # counters of an hour: the ban must still be listed (it is neither among
    # the 200 that clear last nor kept by a list that drops the soonest).
    # With a ban in force, each decision asks about it in the same script
    # call: 210 requests, 210 calls (not 420).
    cli('CONFIG RESETSTAT');
    $d->get('/many', 'X-K' => "k$_") for 1 .. 210;
    my $st = cli('INFO', 'commandstats');
    my $scripts = HLRedis::script_calls($st);
    ok t_cmp($scripts >= 210 && $scripts <= 215 ? 1 : 0, 1,
             "HotLimitBan: one script call per decision, ban check included ($scripts for 210)");
    {
        my $fill = $redis->dir . "/fill.lua";
        open my $fh, '>', $fill or die "$fill: $!";
        print {$fh} "local t = redis.call('TIME')\n"
                  . "local now = tonumber(t[1]) * 1000\n"
                  . "for i = 1, 10001 do redis.call('ZADD', KEYS[1], now + 3600000, 'hl:{hl}:d0/fill|' .. i) end\n"
                  . "return 1\n";
        close $fh;
        cli("--eval $fill 'hl:{hl}:limited'");
    }
    ok t_cmp($d->codes('/banq', 4), '200 429 429 429', 'ban: 1 admitted and 3 refused on one server');
    # Banned: each thread asks Redis once, then answers from its
    # refused-until note (the ban refuses whatever the quota says).
    cli('CONFIG RESETSTAT');
    my $banned = $d->codes('/banq', 30);
    my $st2 = cli('INFO', 'commandstats');
    my $asked = HLRedis::script_calls($st2);
    ok t_cmp(($banned =~ tr/4//) == 30 && $asked <= 20 ? 1 : 0, 1,
             "ban: 30 requests of the banned client refused with $asked script calls (a note per thread)");
    my $res = $e->get('/unlimited-page');
    ok t_cmp($res->code, 429, 'ban: the other server refuses the client on any route (the ban is in Redis)');
    ok t_cmp($res->header('Retry-After') // 0, qr/^[1-5]$/, '... with the time left');

    # Both servers list the ban from Redis, and either lifts it for both.
    my @listed = grep { $_->{key} =~ /ban\|127\.0\.0\.1$/ } @{ ($e->status || {})->{bans} || [] };
    ok t_cmp(scalar(@listed), 1, 'ban: listed in ?json by the server that did not start it');
    ok t_cmp($e->metrics, qr/^hotlimit_bans_active 1$/m, '... and counted in its ?metrics');
    my $lift = $e->{ua}->post($e->url('/hotlimit-status'), [ reset => '127.0.0.1' ],
                              Origin => 'http://127.0.0.1:' . $e->port, 'Sec-Fetch-Site' => 'same-origin');
    ok t_cmp($lift->content, qr/"removed":[1-9]/, 'ban: lifted on that server by the client address');
    # d's threads trust their refused-until notes for a second at most.
    sleep 1.2;
    ok t_cmp($d->get('/never-asked-here')->code != 429 ? 1 : 0, 1, '... and the server that started it admits the client again, within a second');
}

# --- HotLimitStoreFailure closed: 503 while Redis is down -----------------------------
# With a ban too: a route without a quota asks Redis about the ban only,
# and a ban that cannot be asked about refuses nobody.
my $c = start_httpd(name => 'redis-closed', conf => $conf . "HotLimitStoreFailure closed\nHotLimitBan 3/1m 5s\n", %env);
ok t_cmp($c->get('/closed')->code, 200, 'closed: answered while Redis is up');
redis_stop();
t_debug('redis after stop: ' . cli('ping'));
ok t_cmp($c->get('/closed')->code, 503, 'closed: 503 while Redis is down');
ok t_cmp($c->get('/unlimited-page')->code, 200, 'closed: routes without a quota are not affected (nor by the ban)');
