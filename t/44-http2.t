# HTTP/2. Many streams of one connection run at once, each on a secondary
# connection of its own: a client that multiplexes 40 requests against a
# quota of 10 still gets exactly 10, and the RateLimit headers and the
# JSON 429 come through HTTP/2 unchanged.
#
# An h2c upgrade (an HTTP/1.1 request with "Upgrade: h2c") is answered by
# mod_http2 replaying the request as stream 1: a second request_rec. It is
# counted once: the HTTP/1.1 request is decided, and the replay does not
# count the keys it was counted under. The note that carries this pays for
# the same key only (never another route), and forged upgrade headers on a
# server that does not upgrade change nothing.
#
# mod_http2 is inactive under prefork (t/run-httpd-tests.sh loads it for
# the event MPM only): the HTTP/2 part is skipped there.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use File::Temp qw(tempdir);
use HLTest;

my $h2_tests = 13;
plan tests => 1 + $h2_tests;

# --- forged upgrade headers where nothing upgrades (HTTP/1.1 server) -------
{
    my @forged = (Upgrade => 'h2c', Connection => 'Upgrade, HTTP2-Settings',
                  'HTTP2-Settings' => 'AAMAAABkAARAAAAAAAIAAAAA');
    my $codes = join ' ', map { Apache::TestRequest::GET('/h2forged/', @forged)->code } 1 .. 3;
    ok t_cmp($codes, '200 200 429', 'forged Upgrade: h2c on a server without h2c: 2 of 2/1m');
}

my $have_h2 = have_module('mod_http2.c') && `curl -V 2>/dev/null` =~ /\bHTTP2\b/;
if (!$have_h2) {
    skip('mod_http2 (event MPM) and curl with HTTP/2 needed', 0) for 1 .. $h2_tests;
    exit 0;
}

Apache::TestRequest::module('hl_h2');
my $site = 'http://' . Apache::TestRequest::hostport();
my $tmp = tempdir(CLEANUP => 1);
my $n = 0;

# Runs one curl over h2c (the first transfer upgrades the connection, the
# others are multiplexed on it) for the URLs; returns one "status version
# connects" line per transfer, in order.
sub h2c {
    my @args = map { ++$n; ('-o', "'$tmp/o${n}_#1'", "'$site$_'") } @_;
    my @lines = `curl --http2 -s -Z --parallel-max 40 -w '%{http_code} %{http_version} %{num_connects}\\n' @args 2>/dev/null`;
    chomp @lines;
    t_debug("curl @_: " . join(' | ', @lines));
    return @lines;
}

# Returns "ADMITTED REFUSED" over lines.
sub tally {
    my %c;
    $c{(split ' ', $_)[0]}++ for @_;
    return ($c{200} // 0) . ' ' . ($c{429} // 0);
}

# --- 40 streams against 10 ---------------------------------------------------
{
    my @lines = h2c('/h2/?[1-40]');
    my $h2 = grep { ((split ' ')[1] // '') eq '2' } @lines;
    my $reused = grep { ((split ' ')[2] // '') eq '0' } @lines;
    ok t_cmp(scalar(@lines), 40, '40 transfers made');
    ok t_cmp($h2 == 40 && $reused >= 30 ? 1 : 0, 1,
             "... every one over HTTP/2, $reused of them as streams of a connection already open");
    ok t_cmp(tally(@lines), '10 30',
             '10 admitted and 30 refused of 40 (the upgrading request counted once)');

    my $head = `curl --http2-prior-knowledge -sS -D - -o '$tmp/body' -H 'Accept: application/json' '$site/h2/' 2>&1`;
    ok t_cmp($head, qr{^HTTP/2 429}m, 'the next request over HTTP/2: 429');
    ok t_cmp($head, qr{^ratelimit-policy: "10/1m";q=10;w=60\r?$}m, '... with RateLimit-Policy');
    my $body = do { local (@ARGV, $/) = ("$tmp/body"); <> // '' };
    ok t_cmp($body, qr{"status":429.*"route":"/h2/"}s, '... and the JSON problem body');
}

# --- one upgrading request costs one ------------------------------------------
{
    my $head = `curl --http2 -sS -D - -o /dev/null '$site/h2one/' 2>&1`;
    ok t_cmp($head, qr{^HTTP/2 200}m, 'an h2c upgrade: the request is answered over HTTP/2');
    ok t_cmp($head, qr{^ratelimit: "5/1m";r=4;t=\d+\r?$}m,
             '... its RateLimit says 4 of 5 left: counted once, not twice');
    ok t_cmp(join(' ', map { (split ' ')[0] } map { h2c('/h2one/') } 1 .. 5), '200 200 200 200 429',
             '... and 4 more upgrades are admitted, then 429');
}

# --- the note pays for its own key only ------------------------------------------
{
    my @lines = h2c('/h2a/', '/h2b/?[1-5]');
    ok t_cmp((split ' ', $lines[0])[0], 200, 'upgrade to /h2a/, 5 streams to /h2b/: /h2a/ admitted');
    ok t_cmp(tally(@lines[1 .. $#lines]), '3 2',
             '... /h2b/ (3/1m) admits 3 of 5: the upgrade paid for no /h2b/ stream');
    ok t_cmp(tally(map { h2c('/h2a/') } 1 .. 3), '2 1', '... /h2a/ has 2 left: counted once');
}

# --- after-response counting (cost=header:) is the replay's -----------------------
{
    # 10/1m cost=header:X-Cost, every response costs 4: 4 + 4 = 8, the third
    # is admitted with 2 left. Counting the 101 of each upgrade as well (1,
    # no header) would leave 0 after two.
    ok t_cmp(join(' ', map { (split ' ', (h2c('/h2cost/'))[0])[0] } 1 .. 3), '200 200 200',
             'cost=header: through h2c upgrades: charged 4 each, not 4 + 1');
}
