# The status page with the Redis store (issue 9): the keys at their limit
# are listed from Redis, so a server shows the keys refused by another
# server that shares the Redis, with count, window and time left; the reset
# button clears them in Redis and in the listing, and the client is
# admitted again; a window that ran out is no longer listed; with Redis
# down the page says so and lists this server's own counters. And
# cost=header: on the Redis store: a response's charge counts across the
# servers, capped at the window's COUNT, and a spent window is listed.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;

plan tests => 30, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };

my $redis = HLRedis->new('redis-status')->start;
my $rport = $redis->port;
my $zset = "'hl:{hl}:limited'";

my $conf = <<"CONF";
HotLimitStore redis://127.0.0.1:$rport
@{[ $redis->secret_conf ]}HotLimitStoreTimeout 50
<Location /lim>
    HotLimitQuota 3/1m
</Location>
<Location /short>
    HotLimitQuota 2/3s
</Location>
<Location "/q&a">
    HotLimitQuota 1/1m
</Location>
<Location /cost>
    HotLimitQuota 10/1m by=header:X-Client cost=header:X-Cost
</Location>
<Location /cost/three.txt>
    Header set X-Cost "3"
</Location>
<Location /cost/fifty.txt>
    Header set X-Cost "50"
</Location>
CONF
my %files = ('cost/three.txt' => "three\n", 'cost/fifty.txt' => "fifty\n");
my $a = start_httpd(name => 'redis-status-a', conf => $conf, files => \%files);
my $b = start_httpd(name => 'redis-status-b', conf => $conf, files => \%files,
                    mpm => hl_other_mpm());

# Returns the entry of ?json's limited_keys on $h whose key is $key, or undef.
sub listed {
    my ($h, $key) = @_;
    my $st = $h->status or return undef;
    my ($e) = grep { $_->{key} eq $key } @{ $st->{limited_keys} || [] };
    return $e;
}

# POSTs reset=$key to $h's status page as its own page's button does
# (same origin, back=1), with extra headers @h instead when given.
sub reset_on {
    my ($h, $key, @h) = @_;
    @h = (Origin => 'http://127.0.0.1:' . $h->port, 'Sec-Fetch-Site' => 'same-origin')
        unless @h;
    return $h->{ua}->post($h->url('/hotlimit-status'), [ reset => $key, back => 1 ], @h);
}

# --- refused on A, listed on B from Redis --------------------------------------
ok t_cmp($a->codes('/lim', 4), '200 200 200 429', 'server A: 3 of 3/1m, then refused');
my $st = $b->status;
ok t_cmp($st->{limited_keys_from} // '', 'redis', 'server B lists the keys at their limit from Redis');
my $e = listed($b, '/lim|127.0.0.1');
ok t_cmp($e ? 1 : 0, 1, 'server B lists /lim|127.0.0.1, refused on server A');
ok t_cmp($e ? "$e->{count} $e->{quota} $e->{window}" : '', '3 directive 1',
         '... with its count, the quota it comes from and its window');
ok t_cmp($e && $e->{left_ms} > 0 && $e->{left_ms} <= 60000 ? 1 : 0, 1,
         '... and the time left, within the window (' . ($e ? $e->{left_ms} : '-') . ' ms)');
ok t_cmp(($st->{limited_keys_total} // 0) >= 1 ? 1 : 0, 1, '... counted in limited_keys_total');
my $html = $b->get('/hotlimit-status')->content;
ok t_cmp($html, qr{<tr class="limited"><td class="key">/lim\|127\.0\.0\.1</td>.*?<input type="hidden" name="reset" value="/lim\|127\.0\.0\.1">}s,
         'server B\'s HTML page: the key with a reset button');
ok t_cmp($html, qr{id="limited-from"[^>]*>[^<]*Redis store}, '... saying the list comes from the Redis store');
ok t_cmp($redis->cli('ZSCORE', $zset, "'hl:{hl}:d0/lim|127.0.0.1'"), qr/^\d+$/,
         'Redis: the counter is in hl:{hl}:limited, scored with when it clears');
my $pttl = $redis->cli('PTTL', $zset);
ok t_cmp($pttl > 0 && $pttl <= 3600 * 1000 ? 1 : 0, 1, "... which expires (PTTL $pttl ms)");

# --- reset from server B's page ------------------------------------------------------
ok t_cmp(reset_on($b, '/lim|127.0.0.1', Origin => 'https://evil.example')->code, 403,
         'a cross-site reset is refused');
ok t_cmp($redis->cli('EXISTS', "'hl:{hl}:d0/lim|127.0.0.1'"), '1', '... and the counter stays in Redis');
ok t_cmp(reset_on($b, '/lim|127.0.0.1')->code, 303, 'the reset button on server B: 303 back to the page');
ok t_cmp($redis->cli('EXISTS', "'hl:{hl}:d0/lim|127.0.0.1'"), '0', '... the counter is gone from Redis');
ok t_cmp($redis->cli('ZSCORE', $zset, "'hl:{hl}:d0/lim|127.0.0.1'"), '', '... and from hl:{hl}:limited');
ok t_cmp(listed($b, '/lim|127.0.0.1') ? 1 : 0, 0, '... and from the listing');
# A server that refused the client keeps a "refused until" note for at most
# a second before asking Redis again.
sleep 1.2;
ok t_cmp($a->codes('/lim', 3), '200 200 200', 'server A admits the client again');

# --- a window that ran out is no longer listed ----------------------------------------
ok t_cmp($a->codes('/short', 2), '200 200', '2 of 2/3s on server A: the last one spends the window');
$e = listed($b, '/short|127.0.0.1');
ok t_cmp($e && $e->{left_ms} > 0 && $e->{left_ms} <= 3000 ? 1 : 0, 1,
         'server B lists it with at most 3 s left (' . ($e ? $e->{left_ms} : '-') . ' ms)');
sleep(($e ? $e->{left_ms} : 3000) / 1000 + 0.3);
ok t_cmp(listed($b, '/short|127.0.0.1') ? 1 : 0, 0, 'once the window ran out it is no longer listed');
ok t_cmp($redis->cli('ZSCORE', $zset, "'hl:{hl}:d0/short|127.0.0.1'"), '', '... nor kept in hl:{hl}:limited');

# --- what the page shows is escaped ------------------------------------------------------
ok t_cmp($a->codes('/q&a', 2), '200 429', '/q&a spent on server A');
$html = $b->get('/hotlimit-status')->content;
ok t_cmp($html =~ m{<td class="key">/q&amp;a\|127\.0\.0\.1</td>} && $html !~ m{/q&a\|} ? 1 : 0, 1,
         'server B\'s page shows the key HTML-escaped');

# --- cost=header: on the Redis store ---------------------------------------------------------
# The charge happens after the response: give it a moment each time.
sub charged {
    my ($h, $path, $client) = @_;
    my $code = $h->get($path, 'X-Client' => $client)->code;
    sleep 0.3;
    return $code;
}
# Returns the count held by the Redis counter of /cost for the client whose
# key is not in @not (the keys are hashed), and that key.
sub cost_counter {
    my @not = @_;
    my ($key) = grep { my $k = $_; !grep { $_ eq $k } @not }
                split /\n/, $redis->cli('--scan', '--pattern', "'hl:{hl}:d0/cost|*'");
    return (undef, '') unless $key;
    return ((split ' ', $redis->cli('GET', "'$key'"))[1], $key);
}
my $codes = join ' ', map { charged($_ % 2 ? $a : $b, '/cost/three.txt', 'c1') } 1 .. 5;
ok t_cmp($codes, '200 200 200 200 429', 'cost 3 of 10/1m across two servers: 4 admitted (the 4th overshoots), then refused');
my ($count1, $key1) = cost_counter();
ok t_cmp($count1 // '', '12', 'Redis counted 3 per request');
ok t_cmp(charged($a, '/cost/fifty.txt', 'c2') . ' ' . charged($b, '/cost/three.txt', 'c2'), '200 429',
         'a charge of 50: admitted, then the window is spent');
my ($count2, $key2) = cost_counter($key1);
ok t_cmp($count2 // '', '10', '... capped at the window\'s COUNT');
$st = $b->status;
my %cost = map { $_->{key} => $_->{count} } grep { $_->{key} =~ m{^/cost\|} } @{ $st->{limited_keys} || [] };
(my $k1 = $key1) =~ s/^hl:\{hl\}:d0//;
(my $k2 = $key2) =~ s/^hl:\{hl\}:d0//;
ok t_cmp(join(' ', map { $cost{$_} // '-' } $k1, $k2), '12 10', 'both spent windows are listed, with their counts');

# --- Redis down: the page says so and lists this server's own counters --------------------
$redis->stop;
my $t0 = time;
$st = $b->status;
my $took = time - $t0;
ok t_cmp(($st->{limited_keys_from} // '') . ($took < 0.5 ? ' fast' : sprintf(' %.3f s', $took)), 'local fast',
         'Redis down: the page answers at once with the local list');
ok t_cmp($b->get('/hotlimit-status')->content, qr{id="limited-from"[^>]*>[^<]*Redis store[^<]*not answering},
         '... and its HTML says the Redis store is not answering');
