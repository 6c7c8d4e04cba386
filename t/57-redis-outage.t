# A Redis outage (spec section 6, issue 18 item 8): each server's local
# counters follow what Redis last answered it for each key (count and
# window end), so when Redis stalls and then stops and HotLimitStoreFailure
# local takes over, a key already spent in Redis stays spent: no server
# admits more of a key than COUNT minus what Redis had counted when it last
# answered that server. Two servers (both MPMs when the run has them)
# share a real redis-server; it is paused (CLIENT PAUSE: every request
# times out after HotLimitStoreTimeout), then stopped.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;

plan tests => 16, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $redis = HLRedis->new('redis-outage')->start;
my $rport = $redis->port;
my $conf = <<"CONF";
HotLimitStore redis://127.0.0.1:$rport
@{[ $redis->secret_conf ]}HotLimitStoreTimeout 50
<Location /once>
    HotLimitQuota 1/1h
</Location>
<Location /five>
    HotLimitQuota 5/1h by=header:X-Key
</Location>
<Location /slide>
    HotLimitQuota 2/1h by=header:X-Key algo=sliding
</Location>
<Location /gcra>
    HotLimitQuota 2/1h by=header:X-Key algo=gcra
</Location>
CONF
my $a = start_httpd(name => 'redis-outage-a', conf => $conf);
my $b = start_httpd(name => 'redis-outage-b', conf => $conf, mpm => hl_other_mpm());
my $mpm = hl_mpm() . '+' . hl_other_mpm();

# --- Redis up: the keys are spent there -----------------------------------------
ok t_cmp(join(' ', $a->get('/once')->code, $b->get('/once')->code, $a->get('/once')->code),
         '200 429 429', "[$mpm] /once 1/1h: A admits, then Redis refuses on B and A");
# /five key p: A 2, B 1, A 1 more: Redis counted 4; A last heard 4, B 3.
ok t_cmp(join(' ', map { $_->get('/five', 'X-Key' => 'p')->code } $a, $a, $b, $a),
         '200 200 200 200', "[$mpm] /five 5/1h key p: 4 admitted (A, A, B, A)");
ok t_cmp(join(' ', map { $_->get('/slide', 'X-Key' => 's')->code } $a, $b, $a),
         '200 200 429', "[$mpm] /slide 2/1h sliding key s: spent on A and B, A hears so");
ok t_cmp(join(' ', map { $_->get('/gcra', 'X-Key' => 'g')->code } $a, $b, $a),
         '200 200 429', "[$mpm] /gcra 2/1h gcra key g: spent on A and B, A hears so");
# A refused-until note is trusted for a second: past it, the servers must
# ask Redis, and so fall back to their local counters.
sleep 1.2;

# --- Redis stalled: every request waits for the timeout, then local ----------------
$redis->cli('CLIENT', 'PAUSE', '20000', 'ALL');
ok t_cmp(join(' ', map { $_->get('/once')->code } $a, $b, $a, $b, $a, $b),
         '429 429 429 429 429 429', "[$mpm] Redis stalled: /once refused by both servers");
ok t_cmp($a->codes('/five', 3, 'X-Key' => 'p'), '200 429 429',
         "[$mpm] Redis stalled: A admits key p once more (5 - 4)");
ok t_cmp($b->codes('/five', 3, 'X-Key' => 'p'), '200 200 429',
         "[$mpm] Redis stalled: B admits key p twice more (5 - 3)");
ok t_cmp(join(' ', map { $_->get('/slide', 'X-Key' => 's')->code } $a, $b),
         '429 429', "[$mpm] Redis stalled: sliding key s refused by both");
ok t_cmp(join(' ', map { $_->get('/gcra', 'X-Key' => 'g')->code } $a, $b),
         '429 429', "[$mpm] Redis stalled: gcra key g refused by both");
ok t_cmp($a->get('/five', 'X-Key' => 'fresh')->code, 200,
         "[$mpm] Redis stalled: a key Redis never counted is admitted (local counters)");
ok t_cmp($a->metrics, qr/^hotlimit_store_up 0$/m, "[$mpm] metrics: the store is down on A");
ok t_cmp($b->metrics, qr/^hotlimit_store_up 0$/m, "[$mpm] metrics: the store is down on B");

# --- Redis stopped: still spent ------------------------------------------------------
$redis->stop;
ok t_cmp(join(' ', map { $_->get('/once')->code } $a, $b, $a, $b),
         '429 429 429 429', "[$mpm] Redis stopped: /once still refused by both servers");
ok t_cmp(join(' ', map { $_->get('/five', 'X-Key' => 'p')->code } $a, $b),
         '429 429', "[$mpm] Redis stopped: key p refused by both (5 of 5 each)");
ok t_cmp(join(' ', map { $_->get('/slide', 'X-Key' => 's')->code } $a, $b),
         '429 429', "[$mpm] Redis stopped: sliding key s refused by both");
ok t_cmp(join(' ', map { $_->get('/gcra', 'X-Key' => 'g')->code } $a, $b),
         '429 429', "[$mpm] Redis stopped: gcra key g refused by both");
