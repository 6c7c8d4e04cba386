# algo=log (spec 2.1, issue 20 item 5): an exact rolling window. Never
# more than COUNT admitted in any WINDOW-long span, checked against a
# reference sliding log the test computes from the admission times it
# recorded; Retry-After is when the oldest admitted request leaves the
# window; COUNT above 64 fails configtest naming the window; a graceful
# restart keeps the logs; the same through the Redis store.
#
# Each request's time is the middle of its round trip (the server decided
# somewhere in it), so a decision may differ from the reference only for
# a request within TOL ms of the moment an entry left the window.
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
use HLTest ();

plan tests => 2 * 10 + 2 + 2 + 4;

my $mpm = HotLimitTable::hl_mpm();
my $TOL = 0.06;

my $quotas = <<'CONF';
<Location /one/>
    HotLimitQuota 5/2s algo=log
</Location>
<Location /two/>
    HotLimitQuota 3/1s 6/4s algo=log
</Location>
<Location /big/>
    HotLimitQuota 64/10s algo=log
</Location>
<Location /after/>
    HotLimitQuota 3/30s algo=log
</Location>
<Location /burst/>
    HotLimitQuota 5/30s algo=log
</Location>
CONF
my %files = map { ("$_/index.html" => "a page\n") } qw(one two big after burst);

# Requests $path every $gap s for $secs s. Returns a list of
# [ time, code, Retry-After ] (time: the middle of the round trip, on
# httpd's monotonic clock). On a test clock (the shm store) the gaps are
# stepped over, not waited out; the Redis store decides on Redis's own
# clock, which no shim moves: there the test waits.
sub steady {
    my ($h, $path, $gap, $secs) = @_;
    my (@out, $next);
    my $start = $h->mono_now;
    $next = $start;
    while ($next < $start + $secs) {
        my $now = $h->mono_now;
        if ($next > $now) {
            $h->{clock_file} ? $h->pass_time($next - $now) : sleep($next - $now);
        }
        my $t0 = $h->mono_now;
        my $res = $h->get($path);
        my $t1 = $h->mono_now;
        push @out, [ ($t0 + $t1) / 2, $res->code, $res->header('Retry-After') ];
        $next += $gap;
    }
    return @out;
}

# Returns the most requests of @$rows admitted within any span shorter
# than $w s less the tolerance (so timing noise never counts).
sub most_in_span {
    my ($rows, $w) = @_;
    my @at = map { $_->[0] } grep { $_->[1] == 200 } @$rows;
    my $most = 0;
    for my $i (0 .. $#at) {
        my $n = grep { $_ >= $at[$i] && $_ < $at[$i] + $w - $TOL } @at;
        $most = $n if $n > $most;
    }
    return $most;
}

# Compares every decision with the reference sliding log over the
# admissions recorded: admitted iff, in every window [count, secs], fewer
# than count were admitted in the span before it. Returns the mismatches
# not within TOL of an entry leaving a window (as text, empty: none).
sub against_reference {
    my ($rows, @windows) = @_;
    my (@log, @bad);
    for my $r (@$rows) {
        my ($t, $code) = @$r;
        my ($want, $near) = (1, 0);
        for my $win (@windows) {
            my ($count, $w) = @$win;
            my @in = grep { $_ > $t - $w } @log;
            $want = 0 if @in >= $count;
            $near = 1 if grep { abs($_ + $w - $t) <= $TOL } @log;
        }
        my $got = $code == 200 ? 1 : 0;
        push @bad, sprintf('%.3f got %d want %d', $t - $rows->[0][0], $code, $want)
            if $got != $want && !$near;
        push @log, $t if $got;
    }
    return join ', ', @bad;
}

# Checks Retry-After of every refusal of /one/ (5/2s): whole seconds until
# the oldest admission in the window leaves it, rounded up, within 1 s.
sub retry_after_ok {
    my ($rows, $count, $w) = @_;
    my (@log, @bad);
    for my $r (@$rows) {
        my ($t, $code, $ra) = @$r;
        if ($code == 200) { push @log, $t; next }
        my @in = grep { $_ > $t - $w } @log;
        next if @in < $count;
        my $want = POSIX::ceil($in[@in - $count] + $w - $t);
        $want = 1 if $want < 1;
        push @bad, sprintf('%.3f: Retry-After %s, want %d', $t - $rows->[0][0],
                           $ra // 'none', $want)
            if !defined $ra || abs($ra - $want) > 1;
    }
    return join ', ', @bad;
}

# The steady-rate checks on server $h ($what: the store); 10 tests.
sub scenario {
    my ($h, $what) = @_;
    my @one = steady($h, '/one/', 0.15, 6);
    my $admitted = grep { $_->[1] == 200 } @one;
    t_debug("$what /one/: " . join ' ', map { sprintf '%.2f:%d', $_->[0] - $one[0][0], $_->[1] } @one);
    ok t_cmp(most_in_span(\@one, 2), 5,
             "[$mpm] $what: 5/2s algo=log every 150 ms for 6 s: at most 5 in any 2 s span");
    ok t_cmp(against_reference(\@one, [5, 2]), '',
             "[$mpm] $what: every decision matches the reference sliding log");
    ok t_cmp($admitted >= 13 && $admitted <= 16 ? 1 : 0, 1,
             "[$mpm] $what: ... admitting as many as it (15 in 6 s; got $admitted)");
    ok t_cmp(retry_after_ok(\@one, 5, 2), '',
             "[$mpm] $what: Retry-After is when the oldest admitted request leaves");

    my @two = steady($h, '/two/', 0.1, 6);
    t_debug("$what /two/: " . join ' ', map { sprintf '%.2f:%d', $_->[0] - $two[0][0], $_->[1] } @two);
    ok t_cmp(most_in_span(\@two, 1) . ' ' . most_in_span(\@two, 4), '3 6',
             "[$mpm] $what: 3/1s 6/4s algo=log every 100 ms: at most 3 in 1 s, 6 in 4 s");
    ok t_cmp(against_reference(\@two, [3, 1], [6, 4]), '',
             "[$mpm] $what: two windows: every decision matches the reference log");

    my $codes = $h->codes('/big/', 66);
    ok t_cmp($codes, join(' ', (200) x 64, 429, 429),
             "[$mpm] $what: 64/10s algo=log: 64 admitted at once, then refused");

    my @after = map { [ time, $h->get('/after/') ] } 1 .. 4;
    my @c = map { $_->[1]->code } @after;
    ok t_cmp("@c", '200 200 200 429', "[$mpm] $what: 3/30s: the 4th refused");
    my $ra = $after[3][1]->header('Retry-After') // 0;
    ok t_cmp($ra >= 29 && $ra <= 30 ? 1 : 0, 1,
             "[$mpm] $what: Retry-After $ra: the first leaves 30 s after it came");

    # Concurrent children and threads: 60 requests from 20 clients at once.
    my $c = HLTest::hl_hammer(port => $h->port, path => '/burst/', total => 60, conc => 20);
    ok t_cmp(($c->{200} // 0) . ' ' . ($c->{429} // 0), '5 55',
             "[$mpm] $what: 60 requests from 20 clients at once: exactly 5 admitted");
}

{
    my $h = HotLimitTable::start_httpd(name => 'algolog', files => \%files,
                                       clock => 1, conf => $quotas);
    scenario($h, 'shm');

    # A graceful restart keeps every log: /after/ stays refused.
    my $off = $h->log_offset;
    kill 'USR1', $h->pid;
    my $kept = $h->wait_log(qr/HL00209: kept/, $off, 20);
    HotLimitTable::wait_until(sub { $h->get('/hotlimit-status?json')->code == 200 }, 20);
    ok t_cmp($kept ? 1 : 0, 1, "[$mpm] shm: graceful restart kept the counters");
    ok t_cmp($h->get('/after/')->code, 429,
             "[$mpm] shm: after the restart the log still refuses /after/");
    $h->stop;
}

# COUNT above 64 is a configtest error naming the window.
{
    my $h = HotLimitTable::start_httpd(
        name => 'algolog-65', files => \%files, start => 0,
        conf => "<Location /x/>\n    HotLimitQuota 5/2s 65/1m algo=log\n</Location>\n");
    my $httpd = Apache::Test::vars('httpd');
    my $out = `$httpd -t -f '$h->{conf_file}' 2>&1`;
    ok t_cmp($? != 0 ? 1 : 0, 1, "[$mpm] HotLimitQuota 65/1m algo=log: configtest fails");
    ok t_cmp($out, qr/HotLimitQuota.*65\/1m.*algo=log.*at most 64/,
             "[$mpm] ... naming the directive, the window and the bound");
}

if (!HLRedis::available()) {
    skip('redis-server is not installed', 0) for 1 .. 10 + 4;
}
else {
    my $redis = HLRedis->new('algolog-redis')->start;
    my $rport = $redis->port;
    my $h = HotLimitTable::start_httpd(
        name => 'algolog-redis', files => \%files,
        conf => "HotLimitStore redis://127.0.0.1:$rport\nHotLimitStoreLease 50\n" . $quotas);
    scenario($h, 'redis');
    my $key = "'hl:{hl}:d0/after/|127.0.0.1'";
    ok t_cmp($redis->cli('TYPE', $key), 'zset', "[$mpm] redis: a log key is a sorted set");
    ok t_cmp($redis->cli('ZCARD', $key), 3, "[$mpm] redis: ... holding the 3 admissions");
    my $ttl = $redis->cli('PTTL', $key);
    ok t_cmp($ttl > 0 && $ttl <= 30000 ? 1 : 0, 1,
             "[$mpm] redis: ... expiring a window after the newest ($ttl ms)");
    ok t_cmp($redis->cli('ZCARD', "'hl:{hl}:d0/one/|127.0.0.1'") <= 5 ? 1 : 0, 1,
             "[$mpm] redis: /one/'s log never holds more than 5");
    $h->stop;
    $redis->stop;
}
