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
use IO::Socket::INET;
use HLTest;

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

# --- 40 streams against 10 ---------------------------------------------------
{
    my @lines = h2c('/h2/?[1-40]');
    my $h2 = grep { ((split ' ')[1] // '') eq '2' } @lines;
    my $reused = grep { ((split ' ')[2] // '') eq '0' } @lines;
    ok t_cmp(scalar(@lines), 40, '40 transfers made');
    ok t_cmp($h2 == 40 && $reused >= 30 ? 1 : 0, 1,
             "... every one over HTTP/2, $reused of them as streams of a connection already open");
    ok t_cmp(hl_tally(@lines), '10 30',
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
    ok t_cmp(hl_tally(@lines[1 .. $#lines]), '3 2',
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
    ok t_cmp(join(' ', map { (split ' ', (h2c('/h2cost/'))[0])[0] } 1 .. 3), '200 200 200',
             'cost=header: through h2c upgrades: charged 4 each, not 4 + 1');
}

# --- a note is for the request that upgraded, not an earlier one ------------------
# On one connection: an HTTP/1.1 request to /h2s1/ asking for h2c without
# HTTP2-Settings (mod_http2 does not upgrade: it is served over HTTP/1.1,
# counted), then one to /h2s2/ that upgrades, then, as HTTP/2 stream 3,
# /h2s1/ again. Stream 3 must be counted: /h2s1/'s note was the first
# request's, already served.
{
    my ($host, $port) = split /:/, Apache::TestRequest::hostport();
    my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                     Timeout => 5) or die "connect: $!";
    binmode $sock;
    my $read_until = sub {
        my ($re) = @_;
        my $buf = '';
        while ($buf !~ $re) {
            my $n = sysread($sock, my $chunk, 65536);
            last unless $n;
            $buf .= $chunk;
        }
        return $buf;
    };
    print {$sock} "GET /h2s1/ HTTP/1.1\r\nHost: $host:$port\r\nUpgrade: h2c\r\n"
                . "Connection: Upgrade\r\n\r\n";
    my $first = $read_until->(qr/\r\n\r\nh2s1 page\n/);
    print {$sock} "GET /h2s2/ HTTP/1.1\r\nHost: $host:$port\r\nUpgrade: h2c\r\n"
                . "Connection: Upgrade, HTTP2-Settings\r\n"
                . "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n";
    my $second = $read_until->(qr/\r\n\r\n/);
    # HTTP/2: the preface, empty SETTINGS, then HEADERS for stream 3 with
    # :method GET, :scheme http (indexed), :path and :authority (literal,
    # indexed names), END_STREAM | END_HEADERS.
    my $lit = sub { my ($index, $v) = @_; pack('C C', $index, length $v) . $v };
    my $block = "\x82\x86" . $lit->(4, '/h2s1/') . $lit->(1, "$host:$port");
    my $frame = sub { my ($type, $flags, $stream, $payload) = @_;
                      substr(pack('N', length $payload), 1) . pack('C C N', $type, $flags, $stream) . $payload };
    print {$sock} "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" . $frame->(4, 0, 0, '')
                . $frame->(1, 5, 3, $block);
    # Let the server answer stream 3 (its frames are not decoded here), then close.
    my $deadline = time + 2;
    while (time < $deadline) {
        my $rin = '';
        vec($rin, fileno($sock), 1) = 1;
        last unless select(my $rout = $rin, undef, undef, 0.3);
        last unless sysread($sock, my $chunk, 65536);
    }
    close $sock;
    t_debug("first: " . (split /\r\n/, $first)[0] . "; second: " . (split /\r\n/, $second)[0]);
    ok t_cmp((split /\r\n/, $first)[0] . ' / ' . (split /\r\n/, $second)[0],
             'HTTP/1.1 200 OK / HTTP/1.1 101 Switching Protocols',
             'no upgrade without HTTP2-Settings, then an upgrade on the same connection');
    # /h2s1/ (5/1m) was counted for the first request and for stream 3:
    # the next request leaves 2.
    my $res = Apache::TestRequest::GET('/h2s1/');
    ok t_cmp($res->header('RateLimit') // '', qr/^"5\/1m";r=2;/,
             "... stream 3 to /h2s1/ was counted: the first request's note paid for nothing");
}
