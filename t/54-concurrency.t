# HotLimitConcurrency N by=KEY (spec sections 2, 7, 8): at most N requests
# of one key in flight at once in a scope; the next gets 429 with
# Retry-After: 1; other keys and other scopes are not affected; a slot is
# given back when its request ends however it ends (response sent, client
# gone) and when the process holding it is killed (kill -9); ?json and
# ?metrics show the figures; HotLimitDryRun only logs.
#
# Requests in flight: half-sent POST bodies (t/lib/HLConc.pm). A key the
# client sends (header:) takes its slot only once the body is in
# (t/78-concurrency-body.t), so the held scopes here are keyed by=env:hlkey,
# set from the X-Key header by SetEnvIf: a key the configuration derives.
# A private httpd (HotLimitTable::start_httpd), so the
# child killed here does not touch the suite's server (t/99-error-log.t).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLConc;
use JSON::PP ();
use IO::Socket::INET ();

plan tests => 56;

my $h = start_httpd(name => 'conc', conf => <<'CONF',
HotLimitQuotaTable @DIR@/table.json
SetEnvIf X-Key "^(.+)$" hlkey=$1
<Location /conc>
    HotLimitConcurrency 2 by=env:hlkey
</Location>
<Location /kill>
    HotLimitConcurrency 2 by=env:hlkey
</Location>
<Location /dry>
    HotLimitConcurrency 1
    HotLimitDryRun On
</Location>
<Location /h2x>
    HotLimitConcurrency 1
</Location>
<Location /cq>
    HotLimitConcurrency 1 by=env:hlkey
    HotLimitQuota 3/1m by=env:hlkey
</Location>
<IfModule http2_module>
    Protocols h2c http/1.1
</IfModule>
CONF
    table => { routes => { '/tc' => { limits => ['100/1m'],
                                      by => 'env:hlkey', concurrency => 1 },
                           '/tp' => { limits => ['100/1m'], by => 'env:hlkey',
                                      concurrency => 1, plan => 'header:X-Plan' } },
               plans => { pro => { limits => ['100/1m'], concurrency => 2 } } },
    files => { 'conc/f.txt' => "ok\n", 'kill/f.txt' => "ok\n",
               'dry/f.txt' => "ok\n", 'tc/f.txt' => "ok\n",
               'h2x/a.txt' => "a\n", 'h2x/b.txt' => "b\n", 'cq/f.txt' => "ok\n",
               'tp/f.txt' => "ok\n" });

sub hold { hl_hold($h->port, @_) }
sub finish { hl_finish(@_) }

# Returns the ?json entry of scope $route (undef when not listed).
sub scope_of {
    my $route = shift;
    my $st = $h->status or return undef;
    my ($e) = grep { $_->{route} eq $route } @{ $st->{concurrency} || [] };
    return $e;
}

sub in_flight {
    my $e = scope_of(shift);
    return $e ? $e->{in_flight} : -1;
}

# Waits until scope $route has $n requests in flight; returns 1 or 0.
sub wait_in_flight {
    my ($route, $n, $timeout) = @_;
    return HotLimitTable::wait_until(sub { in_flight($route) == $n }, $timeout // 5)
        ? 1 : 0;
}

my $off = $h->log_offset;

# --- two of key A in flight: the third is refused, others are not ---------
my @a = (hold('/conc/f.txt', 'A'), hold('/conc/f.txt', 'A'));
ok t_cmp(wait_in_flight('/conc', 2), 1, 'two requests of key A in flight');
my $res = $h->get('/conc/f.txt', 'X-Key' => 'A');
ok t_cmp($res->code, 429, 'a third request of key A: 429');
ok t_cmp($res->header('Retry-After') // '', '1', 'with Retry-After: 1');
ok t_cmp($res->header('Cache-Control') // '', 'no-store', 'and Cache-Control: no-store');
$res = $h->get('/conc/f.txt', 'X-Key' => 'A', Accept => 'application/json');
ok t_cmp(($res->header('Content-Type') // '') =~ m{^application/json} ? 1 : 0, 1,
         'a JSON client gets a JSON 429');
ok t_cmp($res->content, qr/"retry_after":1\b/, '... saying retry_after 1');
ok t_cmp($h->get('/conc/f.txt', 'X-Key' => 'B')->code, 200, 'key B is admitted');
ok t_cmp($h->get('/kill/f.txt', 'X-Key' => 'A')->code, 200,
         'key A in another scope is admitted');
my @lines = grep { /HL01500/ } $h->log_lines($off);
ok t_cmp($lines[0] // '', qr{HL01500: rejected client=127\.0\.0\.1 route=/conc key=/conc\|e:[0-9a-f]{16} limit=2 concurrent retry_after=1},
         'the refusal is logged (HL01500) with route, key and limit');

$off = $h->log_offset;
my @r = map { $h->get('/conc/f.txt', 'X-Key' => 'A')->code } 1 .. 10;
@lines = grep { /HL01500/ } $h->log_lines($off);
ok t_cmp(scalar(@lines) <= 2 ? 1 : 0, 1,
         'HotLimitLogRefusals first: 10 refusals within a second write at most 2 lines ('
         . scalar(@lines) . ')');

# --- a response sent gives the slot back -------------------------------------
ok t_cmp(finish(shift @a), 200, 'the first held request completes: 200');
ok t_cmp($h->get('/conc/f.txt', 'X-Key' => 'A')->code, 200,
         'key A is admitted again once one has ended');
ok t_cmp(finish(shift @a), 200, 'the second completes');
ok t_cmp(wait_in_flight('/conc', 0), 1, 'nothing in flight once all ended');

# --- a client that hangs up gives its slot back --------------------------------
@a = (hold('/conc/f.txt', 'A'), hold('/conc/f.txt', 'A'));
ok t_cmp(wait_in_flight('/conc', 2), 1, 'two held again');
ok t_cmp($h->get('/conc/f.txt', 'X-Key' => 'A')->code, 429, 'and the third refused again');
close shift @a;    # gone mid-request
ok t_cmp(wait_in_flight('/conc', 1), 1, 'a client gone mid-request gives its slot back');
ok t_cmp($h->get('/conc/f.txt', 'X-Key' => 'A')->code, 200, 'key A admitted after the hang-up');
close shift @a;
ok t_cmp(wait_in_flight('/conc', 0), 1, 'the other hang-up too');

# --- a graceful restart keeps the slots of requests still in flight ------------------
@a = (hold('/conc/f.txt', 'G'), hold('/conc/f.txt', 'G'));
wait_in_flight('/conc', 2);
kill 'USR1', $h->pid;
# The new generation runs once the parent says so a second time.
HotLimitTable::wait_until(sub {
    (grep { /resuming normal operations/ } $h->log_lines(0)) >= 2 }, 10);
sleep 0.5;
ok t_cmp($h->get('/conc/f.txt', 'X-Key' => 'G')->code, 429,
         'after a graceful restart, the new generation sees the old one\'s two slots');
ok t_cmp(finish(shift @a), 200, 'an old-generation request completes');
ok t_cmp(wait_in_flight('/conc', 1), 1, '... and gives its slot back in the same table');
ok t_cmp(finish(shift @a), 200, 'the other too') and wait_in_flight('/conc', 0);

# --- ?json and ?metrics ----------------------------------------------------------
my $e = scope_of('/conc') || {};
ok t_cmp($e->{limit} // 0, 2, '?json: the scope limit');
ok t_cmp(($e->{rejected} // 0) >= 3 ? 1 : 0, 1, "?json: refusals counted ($e->{rejected})");
my $m = $h->metrics;
ok t_cmp($m, qr/^hotlimit_concurrency_in_flight\{route="\/conc",origin="directive"\} 0$/m,
         '?metrics: in-flight gauge');
my ($rej) = $m =~ /^hotlimit_concurrency_rejected_total\{route="\/conc",origin="directive"\} (\d+)$/m;
ok t_cmp(($rej // 0) >= 3 ? 1 : 0, 1, '?metrics: refusals counter (' . ($rej // 'none') . ')');

# --- kill -9 of the processes holding slots gives them back -----------------------------
my @k = (hold('/kill/f.txt', 'K'), hold('/kill/f.txt', 'K'));
ok t_cmp(wait_in_flight('/kill', 2), 1, 'two of key K held');
ok t_cmp($h->get('/kill/f.txt', 'X-Key' => 'K')->code, 429, 'the third refused');
my %kids = map { $_ => 1 } $h->children;
my %pids = map { $_->{pid} => 1 } @{ (scope_of('/kill') || {})->{holders} || [] };
my @victims = grep { $kids{$_} } sort keys %pids;
ok t_cmp(scalar(@victims) >= 1 && @victims == keys %pids ? 1 : 0, 1,
         '?json names the holders: children of httpd (' . join(',', @victims) . ')');
kill 'KILL', @victims;
my $t0 = time;
my $back = HotLimitTable::wait_until(sub {
    $h->get('/kill/f.txt', 'X-Key' => 'K')->code == 200 }, 10);
ok t_cmp($back ? 1 : 0, 1, 'after kill -9 of the holders key K is admitted again ('
         . HotLimitTable::elapsed_since($t0) . ' s)');
ok t_cmp(time - $t0 < 3 ? 1 : 0, 1, 'within 3 s');
ok t_cmp(wait_in_flight('/kill', 0), 1, 'the dead holders are gone from ?json');
close $_ for @k;

# --- dry run: logged, never refused ----------------------------------------------
$off = $h->log_offset;
my $d = hold('/dry/f.txt', 'D');
wait_in_flight('/dry', 1);
ok t_cmp($h->get('/dry/f.txt')->code, 200, 'HotLimitDryRun On: over the limit, admitted');
@lines = grep { /HL01501/ } $h->log_lines($off);
ok t_cmp(scalar(@lines) >= 1 ? 1 : 0, 1, '... and logged as a dry run (HL01501)');
close $d;

# --- the quota table's "concurrency" -------------------------------------------------
my $tc = hold('/tc/f.txt', 'T');
ok t_cmp(wait_in_flight('/tc', 1), 1, 'table route /tc: one of key T in flight');
ok t_cmp(scope_of('/tc')->{origin} // '', 'table', '?json: origin table');
ok t_cmp($h->get('/tc/f.txt', 'X-Key' => 'T')->code, 429,
         '"concurrency": 1 refuses a second request of key T');
ok t_cmp($h->get('/tc/f.txt', 'X-Key' => 'U')->code, 200, 'key U is admitted');
ok t_cmp($h->get('/tc/f.txt', 'X-Key' => 'U')->header('X-HL-Route') // '', '/tc',
         'and its quota still applies (HOTLIMIT_ROUTE)');
ok t_cmp(finish($tc), 200, 'the held request completes');
ok t_cmp(wait_in_flight('/tc', 0), 1, '... and gives its slot back');
$res = $h->get('/tc/f.txt', 'X-Key' => 'T');
ok t_cmp($res->code, 200, 'then key T is admitted again')
    or print STDERR "# refused: ", $res->as_string, "# ?json: ",
                    JSON::PP->new->canonical->encode(scope_of('/tc') || {}), "\n";

# Pipelined requests of one key on one connection: httpd answers the first
# and keeps its request (and pool) until the answers are flushed, which it
# does only after the pipelined ones; the slot is given back when the first
# answer ends (its EOS), so the second is admitted, not refused by itself.
{
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port,
                                  Proto => 'tcp', Timeout => 10) or die "connect: $!";
    my $req = "GET /tc/f.txt HTTP/1.1\r\nHost: localhost\r\nX-Key: T\r\n";
    print {$s} $req . "\r\n" . $req . "\r\n" . $req . "Connection: close\r\n\r\n";
    my $codes = hl_answers($s);
    close $s;
    ok t_cmp($codes, '200 200 200',
             'three pipelined requests of key T on one connection: each admitted in turn');
}

# --- a plan's "concurrency" (the table's plans) --------------------------------------
my @p = (hold('/tp/f.txt', 'P', 'X-Plan: pro'));
ok t_cmp(wait_in_flight('/tp plan=pro', 1), 1, 'plan pro: one in flight, under the plan\'s scope');
ok t_cmp($h->get('/tp/f.txt', 'X-Key' => 'P', 'X-Plan' => 'pro')->code, 200,
         'plan pro ("concurrency": 2) admits a second');
push @p, hold('/tp/f.txt', 'P', 'X-Plan: pro');
wait_in_flight('/tp plan=pro', 2);
ok t_cmp($h->get('/tp/f.txt', 'X-Key' => 'P', 'X-Plan' => 'pro')->code, 429,
         '... and refuses a third');
push @p, hold('/tp/f.txt', 'P');
wait_in_flight('/tp', 1);
ok t_cmp($h->get('/tp/f.txt', 'X-Key' => 'P')->code, 429,
         'without a plan the route\'s own "concurrency": 1 applies');
close $_ for @p;

# --- a request refused for concurrency spends no quota ---------------------------------
my $q = hold('/cq/f.txt', 'Q');     # counted: 1 of 3
wait_in_flight('/cq', 1);
ok t_cmp(join(' ', map { $h->get('/cq/f.txt', 'X-Key' => 'Q')->code } 1 .. 4),
         '429 429 429 429', 'four refused while one is in flight');
ok t_cmp(finish($q), 200, 'the one in flight completes');
ok t_cmp(join(' ', map { $h->get('/cq/f.txt', 'X-Key' => 'Q')->code } 1 .. 3),
         '200 200 429', 'the quota (3/1m) still had 2 left: the refusals counted nowhere');

# --- a request that times out gives its slot back (Timeout 2) --------------------------
{
    my $t = start_httpd(name => 'conc-timeout', conf => <<'CONF',
Timeout 2
<Location /to>
    HotLimitConcurrency 1
</Location>
CONF
        files => { 'to/f.txt' => "ok\n" });
    my $flight = sub {
        my $st = $t->status or return -1;
        my ($e) = grep { $_->{route} eq '/to' } @{ $st->{concurrency} || [] };
        return $e ? $e->{in_flight} : -1;
    };
    my $s = hl_hold($t->port, '/to/f.txt', 'Z');
    HotLimitTable::wait_until(sub { $flight->() == 1 }, 5);
    ok t_cmp($t->get('/to/f.txt')->code, 429, 'Timeout 2: one held, the next refused');
    my $code = hl_answer($s, 8);
    close $s;
    ok t_cmp($code, qr/^(?:400|408|500)$/, "the held request times out ($code)");
    ok t_cmp(HotLimitTable::wait_until(sub { $flight->() == 0 }, 5) ? 1 : 0, 1,
             'its slot is given back');
    $t->stop;
}

# --- an h2c upgrade: the HTTP/1.1 request gives its slot to the replay --------------
# mod_http2 runs the whole HTTP/2 session inside the upgrading request and
# replays it as stream 1: that request must not keep its slot meanwhile.
# Event MPM with mod_http2 only (mod_http2 is inactive under prefork).
my $h2 = do {
    open my $bh, '<', HotLimitTable::_base_conf() or die "base conf: $!";
    scalar grep { /^\s*LoadModule\s+http2_module\b/ } <$bh>;
};
if (!$h2 || HotLimitTable::hl_mpm() eq 'prefork' || `curl -V 2>/dev/null` !~ /HTTP2/) {
    skip('mod_http2 not loaded (prefork), or curl without HTTP/2', 0) for 1 .. 2;
}
else {
    my @l = map { `curl --http2 -s -o /dev/null -w '%{http_code} %{http_version}' '${\ $h->url($_)}'` }
            '/h2x/a.txt', '/h2x/b.txt';
    ok t_cmp("@l", '200 2 200 2',
             'HotLimitConcurrency 1: two h2c upgrades, each answered 200 over HTTP/2 by its replay');
    ok t_cmp(wait_in_flight('/h2x', 0), 1, 'nothing held once the connection is done');
}
