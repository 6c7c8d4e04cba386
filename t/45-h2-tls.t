# HTTP/2 over TLS (h2, chosen by ALPN), as browsers speak it: the streams
# of one connection run at once, each on a secondary connection of its
# own, and are counted exactly like HTTP/1.1 requests: 40 streams against
# a quota of 10 get exactly 10, the 429 carries its headers and JSON body
# over HTTP/2, and HTTP/1.1 over TLS counts against the same key.
#
# A private instance (event MPM, mod_ssl, mod_http2) with a certificate
# made for the test; the plain port answers the readiness check, the TLS
# port is a virtual host. Skipped under prefork (mod_http2 serves one
# stream at a time there), and without mod_ssl, mod_http2, openssl or a
# curl that speaks HTTP/2.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLTest qw(hl_tally);

plan tests => 6, need need_module('mod_hotlimit.c');

my $mods = Apache::Test::vars('libexecdir') || '/usr/lib/apache2/modules';
my $why = hl_mpm() ne 'event'                   ? 'HTTP/2 streams run at once under event only'
        : !-f "$mods/mod_ssl.so"                 ? 'mod_ssl not installed'
        : !-f "$mods/mod_http2.so"               ? 'mod_http2 not installed'
        : system('openssl version >/dev/null 2>&1') ? 'openssl not installed'
        : `curl -V 2>/dev/null` !~ /\bHTTP2\b/    ? 'curl without HTTP/2'
        : '';
if ($why) {
    skip($why, 0) for 1 .. 6;
    exit 0;
}

my $tls_port = HotLimitTable::free_port();
my $h = start_httpd(name => 'h2tls', start => 0, conf => <<"CONF");
@{[ hl_tls_conf($mods, $tls_port) ]}
<IfModule !http2_module>
    LoadModule http2_module $mods/mod_http2.so
</IfModule>
<Location /tls>
    HotLimitQuota 10/1m
</Location>
<Location /tls1>
    HotLimitQuota 2/1m
</Location>
CONF
my $dir = $h->dir;
hl_make_cert($dir);
$h->start;

my $site = "https://127.0.0.1:$tls_port";
my $n = 0;

# Runs one curl (certificate not checked: it is the test's own) with
# @opts for the URLs; returns one "status version connects" line per
# transfer, in order.
sub fetch {
    my ($opts, @paths) = @_;
    my @args = map { ++$n; ('-o', "'$dir/o${n}_#1'", "'$site$_'") } @paths;
    my @lines = `curl -k -s $opts -w '%{http_code} %{http_version} %{num_connects}\\n' @args 2>/dev/null`;
    chomp @lines;
    t_debug("curl $opts @paths: " . join(' | ', @lines));
    return @lines;
}

my @lines = fetch('--http2 -Z --parallel-max 40', '/tls/?[1-40]');
my $h2 = grep { ((split ' ')[1] // '') eq '2' } @lines;
my $reused = grep { ((split ' ')[2] // '') eq '0' } @lines;
ok t_cmp(scalar(@lines) == 40 && $h2 == 40 ? 1 : 0, 1, '40 transfers, every one over HTTP/2 (TLS, ALPN h2)');
ok t_cmp($reused >= 30 ? 1 : 0, 1, "... $reused of them as streams of a connection already open");
ok t_cmp(hl_tally(@lines), '10 30', '10 admitted and 30 refused of 40 streams against 10/1m');

my $head = `curl -k --http2 -sS -D - -o '$dir/body' -H 'Accept: application/json' '$site/tls/' 2>&1`;
ok t_cmp($head, qr{^HTTP/2 429.*^ratelimit-policy: "10/1m";q=10;w=60\r?$}ms,
         'the next request over HTTP/2: 429 with its RateLimit-Policy');
my $body = do { local (@ARGV, $/) = ("$dir/body"); <> // '' };
ok t_cmp($body, qr{"status":429.*"route":"/tls"}s, '... and the JSON problem body');

# HTTP/1.1 over TLS, then HTTP/2 over TLS: one client, one counter.
my @mixed = (fetch('--http1.1', '/tls1/'), fetch('--http2', '/tls1/', '/tls1/'));
ok t_cmp(join(' ', map { join '/', (split ' ')[0, 1] } @mixed), '200/1.1 200/2 429/2',
         'HTTP/1.1 then HTTP/2 over TLS share the 2/1m counter of one client');

$h->stop;
