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
# Several requests on one connection go through t/lib/HLH2.pm, which sends
# them in one write and waits for every answer: httpd closes an upgraded
# connection with GOAWAY when a stream arrives after stream 1 is done, so
# curl -Z lost transfers (and streams went uncounted) on a loaded machine.
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
use HLH2;

my $h2_tests = 16;
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

my ($hl_host, $hl_port) = split /:/, Apache::TestRequest::hostport();
my $authority = "$hl_host:$hl_port";

# Runs one curl over h2c (the transfer upgrades its connection) for the
# URL; returns its "status version connects" line. One transfer per curl:
# curl loses further transfers on an upgraded connection (t/lib/HLH2.pm).
sub h2c {
    my ($path) = @_;
    ++$n;
    my $line = `curl --http2 -s -o '$tmp/o$n' -w '%{http_code} %{http_version} %{num_connects}\\n' '$site$path' 2>/dev/null`;
    chomp $line;
    t_debug("curl $path: $line");
    return $line;
}

# Sends, in one write on one connection, an HTTP/1.1 GET of $upgrade_path
# asking for the h2c upgrade, the client preface, and a GET of each of
# @paths as HTTP/2 streams 3, 5, ...; reads until every stream has ended.
# Returns (the status line of the HTTP/1.1 response, the status of stream
# 1 (the upgraded request), then those of the streams in order; undef for
# a stream not answered).
sub h2c_streams {
    my ($upgrade_path, @paths) = @_;
    my @ids = map { 3 + 2 * $_ } 0 .. $#paths;
    my $send = h2_upgrade_request($authority, $upgrade_path) . h2_preface()
             . join('', map { h2_get($ids[$_], $authority, $paths[$_]) } 0 .. $#paths);
    my $r = h2_talk(port => $hl_port, send => $send, http1 => 1, streams => [1, @ids]);
    my @status = map { $r->{streams}{$_} ? $r->{streams}{$_}{status} : undef } 1, @ids;
    t_debug("h2c $upgrade_path + @paths: @{$r->{http1}} | @{[map { $_ // '-' } @status]}"
            . ' goaway=' . ($r->{goaway} // '-') . ' error=' . ($r->{error} // '-'));
    return ($r->{http1}[0] // '', @status);
}

# --- 40 streams against 10 ---------------------------------------------------
# One connection: the h2c upgrade (stream 1), then 39 streams sent at once.
{
    my ($http1, @status) = h2c_streams('/h2/?1', map { "/h2/?$_" } 2 .. 40);
    ok t_cmp($http1, 'HTTP/1.1 101 Switching Protocols', 'an h2c upgrade, then 39 streams on that connection');
    ok t_cmp(scalar(grep { defined } @status), 40, '... all 40 requests answered over HTTP/2');
    ok t_cmp(hl_tally(grep { defined } @status), '10 30',
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
    ok t_cmp(join(' ', map { (split ' ', h2c('/h2one/'))[0] } 1 .. 5), '200 200 200 200 429',
             '... and 4 more upgrades are admitted, then 429');
}

# --- the note pays for its own key only ------------------------------------------
{
    my ($http1, @status) = h2c_streams('/h2a/', map { "/h2b/?$_" } 1 .. 5);
    ok t_cmp(($status[0] // '-') . ' ' . $http1, '200 HTTP/1.1 101 Switching Protocols',
             'upgrade to /h2a/, 5 streams to /h2b/ on that connection: /h2a/ admitted');
    ok t_cmp(hl_tally(grep { defined } @status[1 .. 5]), '3 2',
             '... /h2b/ (3/1m) admits 3 of 5: the upgrade paid for no /h2b/ stream');
    ok t_cmp(hl_tally(map { h2c('/h2a/') } 1 .. 3), '2 1', '... /h2a/ has 2 left: counted once');
}

# --- hotlimit_param() reads an HTTP/2 request body (urlencoded, multipart) ----
{
    my $code = sub { `curl --http2-prior-knowledge -s -o /dev/null -w '%{http_code}' @_ '$site/h2param/' 2>/dev/null` };
    my $codes = join ' ', $code->(q{-d 'id=1'}), $code->(q{-d 'u=a&p=b'}),
                          $code->(q{-F u=a -F p=c}), $code->(q{-d 'u=a&%70=d'});
    ok t_cmp($codes, qr/^(?!429)\d+ (?!429)\d+ (?!429)\d+ 429$/,
             'HTTP/2 POST bodies: u and p urlencoded, multipart, an encoded name: 2, then 429');
}

# --- after-response counting (cost=header:) is the replay's -----------------------
{
    # 10/1m cost=header:X-Cost, every response costs 4: 4 + 4 = 8, the third
    # is admitted with 2 left. Counting the 101 of each upgrade as well (1,
    # no header) would leave 0 after two.
    ok t_cmp(join(' ', map { (split ' ', h2c('/h2cost/'))[0] } 1 .. 3), '200 200 200',
             'cost=header: through h2c upgrades: charged 4 each, not 4 + 1');
}

# --- a note is for the request that upgraded, not an earlier one ------------------
# On one connection, in one write (httpd reads pipelined requests one after
# the other, as if they came one by one): an HTTP/1.1 request to /h2s1/
# asking for h2c without HTTP2-Settings (mod_http2 does not upgrade: it is
# served over HTTP/1.1, counted), then one to /h2s2/ that upgrades, then,
# as HTTP/2 stream 3, /h2s1/ again. Stream 3 must be counted: /h2s1/'s
# note was the first request's, already served. The client waits for the
# answer to stream 3 before the next request checks the counter.
{
    my $send = "GET /h2s1/ HTTP/1.1\r\nHost: $authority\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
             . h2_upgrade_request($authority, '/h2s2/') . h2_preface() . h2_get(3, $authority, '/h2s1/');
    my $r = h2_talk(port => $hl_port, send => $send, http1 => 2, streams => [1, 3]);
    my $s3 = $r->{streams}{3} // {};
    t_debug("h2s: @{$r->{http1}} | stream 3: " . ($s3->{status} // '-')
            . ' goaway=' . ($r->{goaway} // '-') . ' error=' . ($r->{error} // '-'));
    ok t_cmp(join(' / ', @{$r->{http1}}, ($s3->{status} // '-') . ' ' . ($s3->{body} // '')),
             "HTTP/1.1 200 OK / HTTP/1.1 101 Switching Protocols / 200 h2s1 page\n",
             'no upgrade without HTTP2-Settings, then an upgrade on the same connection, then stream 3 answered');
    # /h2s1/ (5/1m) was counted for the first request and for stream 3:
    # the next request leaves 2.
    my $res = Apache::TestRequest::GET('/h2s1/');
    ok t_cmp($res->header('RateLimit') // '', qr/^"5\/1m";r=2;/,
             "... stream 3 to /h2s1/ was counted: the first request's note paid for nothing");
}
