# HotLimitConcurrency with the Redis store (spec section 6): two servers
# sharing one redis-server hold at most N requests of one key in flight
# together; a slot is given back (ZREM) when its request ends, also when
# the client hangs up; each slot carries an expiry that its child refreshes
# while the request runs, so the slots of a server that dies come back
# (after 30 s, HL_CONC_REDIS_TTL_MS: the test checks the expiry and its
# refresh rather than waiting for it). Held by half-sent bodies, so keyed
# by=env:hlkey (SetEnvIf from X-Key): a header: key takes its slot only
# once the body is in (t/78-concurrency-body.t).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;
use HLConc;

plan tests => 14, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $redis = HLRedis->new('conc-redis');
$redis->start;
my $rport = $redis->port;
my $conf = <<"CONF";
HotLimitStore redis://127.0.0.1:$rport
@{[ $redis->secret_conf ]}SetEnvIf X-Key "^(.+)\$" hlkey=\$1
<Location /rc>
    HotLimitConcurrency 2 by=env:hlkey
</Location>
CONF
my %files = ('rc/f.txt' => "ok\n");
my $a = start_httpd(name => 'conc-redis-a', conf => $conf, files => \%files);
my $b = start_httpd(name => 'conc-redis-b', conf => $conf, files => \%files,
                    mpm => HotLimitTable::hl_other_mpm());

sub hold { hl_hold($_[0]->port, '/rc/f.txt', $_[1]) }
sub finish { hl_finish(@_) }

# Returns the Redis sets of HotLimitConcurrency keys.
sub sets { grep { length } split /\n/, $redis->cli('--scan', '--pattern', "'*conc:*'") }

# Returns how many slots the one set holds (0 when none).
sub held {
    my @s = sets();
    return 0 unless @s;
    return $redis->cli('ZCARD', "'$s[0]'") + 0;
}

my $ha = hold($a, 'K');
my $hb = hold($b, 'K');
ok t_cmp(HotLimitTable::wait_until(sub { held() == 2 }, 5) ? 1 : 0, 1,
         'one request of key K in flight on each server: two slots in Redis');
ok t_cmp(scalar(sets()), 1, 'in one set (the key, whatever the server)');
ok t_cmp($a->get('/rc/f.txt', 'X-Key' => 'K')->code, 429, 'a third on server A: 429');
my $res = $b->get('/rc/f.txt', 'X-Key' => 'K');
ok t_cmp($res->code, 429, 'a third on server B: 429');
ok t_cmp($res->header('Retry-After') // '', '1', 'with Retry-After: 1');
ok t_cmp($b->get('/rc/f.txt', 'X-Key' => 'L')->code, 200, 'key L is admitted');

my ($set) = sets();
my $pttl = $redis->cli('PTTL', "'$set'");
ok t_cmp($pttl > 0 && $pttl <= 30000 ? 1 : 0, 1, "the set expires ($pttl ms left)");
my @m = split /\n/, $redis->cli('ZRANGE', "'$set'", 0, -1, 'WITHSCORES');
my $score0 = $m[1] // 0;
sleep 6.5;      # past one refresh (every 5 s)
@m = split /\n/, $redis->cli('ZRANGE', "'$set'", 0, -1, 'WITHSCORES');
ok t_cmp(($m[1] // 0) > $score0 ? 1 : 0, 1, 'a held slot\'s expiry is refreshed while its request runs');
ok t_cmp(held(), 2, 'both still held');

ok t_cmp(finish($ha), 200, "server A's request completes");
ok t_cmp(HotLimitTable::wait_until(sub { held() == 1 }, 5) ? 1 : 0, 1,
         'its slot is given back in Redis');
ok t_cmp($b->get('/rc/f.txt', 'X-Key' => 'K')->code, 200,
         'server B admits key K again');
close $hb;     # gone mid-request
ok t_cmp(HotLimitTable::wait_until(sub { held() == 0 }, 5) ? 1 : 0, 1,
         'a client gone mid-request gives its Redis slot back');
ok t_cmp($a->get('/rc/f.txt', 'X-Key' => 'K')->code, 200, 'key K admitted on A');
