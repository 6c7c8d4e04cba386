# HotLimitStoreLease (the Redis store's leases, src/core/hl_lease.h): a child that
# sees one key often asks Redis for extra units with its round trip and
# admits that many requests without asking again. Off by default (every
# decision one script call, t/36-redis.t). With it on: a hot key costs far
# fewer script calls, its RateLimit remaining still goes down one by one,
# and its counter in Redis covers every admitted request; two servers under
# 20 concurrent clients never admit more than the quota; a client slower
# than two requests per half second, or a quota with less than 8 left,
# never gets a lease, so such quotas stay exact; gcra quotas and a ban's
# refusal counter are never leased; after a reset the key counts afresh.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use List::Util ();
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLTest;
use HLRedis;

plan tests => 22, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $redis = HLRedis->new('redis-lease')->start;
my $rport = $redis->port;
sub cli { $redis->cli(@_) }
sub evalsha_calls { (cli('INFO', 'commandstats') =~ /cmdstat_evalsha:calls=(\d+)/)[0] // 0 }
sub count_of { (split ' ', cli('GET', "'hl:{hl}:$_[0]'") // '')[1] // 0 }

my $conf = <<"CONF";
HotLimitStore redis://127.0.0.1:$rport
@{[ $redis->secret_conf ]}HotLimitStoreLease 50
<Location /hot>
    HotLimitQuota 1000/1m
</Location>
<Location /shared>
    HotLimitQuota 200/1m by=header:X-Client
</Location>
<Location /slow>
    HotLimitQuota 1000/1m
</Location>
<Location /small>
    HotLimitQuota 5/1m
</Location>
<Location /gcra>
    HotLimitQuota 1000/1m algo=gcra
</Location>
<Location /reset-hot>
    HotLimitQuota 1000/1m
</Location>
CONF
my $a = start_httpd(name => 'redis-lease-a', conf => $conf);
my $b = start_httpd(name => 'redis-lease-b', conf => $conf, mpm => hl_other_mpm());

# --- a hot key: few round trips, every request counted ------------------------------
cli('CONFIG RESETSTAT');
my (%codes, @r);
my $hot_off = $a->access_offset;
for (1 .. 300) {
    my $res = $a->get('/hot');
    $codes{ $res->code }++;
    push @r, ($res->header('RateLimit') // '') =~ /r=(\d+)/ ? $1 : -1;
}
my $calls = evalsha_calls();
ok t_cmp($codes{200} // 0, 300, 'hot key: 300 of 1000/1m admitted');
ok t_cmp($calls <= 60 ? 1 : 0, 1, "... with $calls script calls for 300 decisions (at most 60)");
my $counted = count_of('d0/hot|127.0.0.1');
ok t_cmp($counted >= 300 ? 1 : 0, 1, "... every admitted request counted in Redis ($counted)");
# The children that served them (from the access log's %P: a child the
# MPM started and retired meanwhile took its lease too).
my %served = map { ((split /\t/)[2] // 0) => 1 }
             grep { m{^GET /hot } } HLTest::hl_lines_since($a->access_log, $hot_off);
my $kids = List::Util::max(scalar(keys %served), scalar($a->children));
ok t_cmp($counted <= 300 + 50 * $kids ? 1 : 0, 1,
         "... plus at most one lease of 50 per child not used yet ($kids children)");
my $min = List::Util::min(@r);
ok t_cmp(defined $min && $min >= 0 && $min <= 700 ? 1 : 0, 1,
         "RateLimit remaining went down to at most 700 ($min)");
ok t_cmp(scalar(grep { $_ < 1000 - $counted } @r), 0,
         '... and never showed less than what Redis had left');
ok t_cmp($a->metrics =~ /^hotlimit_store_leased_total (\d+)$/m && $1 >= 200 ? 1 : 0, 1,
         '?metrics counts the requests admitted by a lease');

# --- two servers, 20 concurrent clients: never more than the quota ------------------
{
    my %all;
    for my $round (1 .. 2) {
        my $res = HLTest::hl_hammer(port => ($round == 1 ? $a : $b)->port, path => '/shared',
                                    total => 300, conc => 20, headers => "X-Client: one\r\n");
        $all{$_} += $res->{$_} for keys %$res;
    }
    my $ok = $all{200} // 0;
    ok t_cmp($ok <= 200 ? 1 : 0, 1, "two servers, 600 requests, 20 concurrent: $ok admitted, never more than 200");
    ok t_cmp($ok >= 180 ? 1 : 0, 1, '... and no fewer than 180 (units left unused in leases are lost)');
    ok t_cmp(($all{0} // 0) + scalar(grep { $_ >= 500 } keys %all), 0, '... no failed connection, no 5xx');
}

# --- a slow client gets no lease: one script call per request -----------------------
cli('CONFIG RESETSTAT');
my @slow;
for (1 .. 4) {
    push @slow, $a->get('/slow')->code;
    sleep 0.6;
}
ok t_cmp("@slow", '200 200 200 200', 'slow client (one request per 0.6 s): admitted');
ok t_cmp(evalsha_calls(), 4, '... one script call per request: no lease');
ok t_cmp(count_of('d0/slow|127.0.0.1'), 4, '... and exactly 4 counted');

# --- a small quota gets no lease: exact ---------------------------------------------
ok t_cmp($a->codes('/small', 8), '200 200 200 200 200 429 429 429', '5/1m with leases on: exactly 5');
ok t_cmp(count_of('d0/small|127.0.0.1'), 5, '... and 5 counted in Redis');

# --- gcra is never leased (units counted ahead would stack on a refilled bucket) ---
cli('CONFIG RESETSTAT');
ok t_cmp($a->codes('/gcra', 30), join(' ', ('200') x 30), 'gcra: 30 quick requests admitted');
ok t_cmp(evalsha_calls(), 30, '... each one a script call: no lease for gcra');

# --- a reset of a leased key (every child's leases are void after it) ---------------
{
    # Leases granted in several children (10 concurrent clients).
    HLTest::hl_hammer(port => $a->port, path => '/reset-hot', total => 400, conc => 10);
    my $res = $a->{ua}->post($a->url('/hotlimit-status'), [ reset => '/reset-hot|127.0.0.1' ],
                             Origin => 'http://127.0.0.1:' . $a->port, 'Sec-Fetch-Site' => 'same-origin');
    ok t_cmp($res->content, qr/"removed":[1-9]/, 'reset of a leased key: its counter removed');
    my $res2 = HLTest::hl_hammer(port => $a->port, path => '/reset-hot', total => 60, conc => 10);
    my $c = count_of('d0/reset-hot|127.0.0.1');
    ok t_cmp($c >= ($res2->{200} // 0) ? 1 : 0, 1,
             "... and Redis has counted at least as many as were admitted since ($c for "
             . ($res2->{200} // 0) . ')');
}

# --- a ban's refusal counter is never leased -----------------------------------------
{
    my $ban_conf = <<"BAN";
HotLimitStore redis://127.0.0.1:$rport
@{[ $redis->secret_conf ]}HotLimitStoreLease 50
HotLimitBan 40/1m 5s
<Location /banned>
    HotLimitQuota 1/1m
</Location>
BAN
    my $c = start_httpd(name => 'redis-lease-ban', conf => $ban_conf);
    my $before = ($c->metrics =~ /^hotlimit_store_leased_total (\d+)$/m)[0] // 0;
    my $codes = $c->codes('/banned', 31);
    my $after = ($c->metrics =~ /^hotlimit_store_leased_total (\d+)$/m)[0] // 0;
    ok t_cmp(scalar(() = $codes =~ /429/g), 30, 'ban counter: 30 quick refusals');
    ok t_cmp($after - $before, 0, '... none of them counted from a lease (a refusal counted ahead would ban early)');
    my $rej = count_of('d0rej|127.0.0.1');
    ok t_cmp($rej >= 1 && $rej <= 30 ? 1 : 0, 1, "... and Redis counted no more refusals than there were ($rej)");
}

