# Status-page resets and Referer (spec section 7, issue 25 item 10): a POST
# with no Origin and a foreign Referer is a cross-site request (a browser
# that sends no Origin still sends the page it came from): 403, logged
# (HL00301), the counter stays spent. A Referer of this server's own page
# is carried out, and so is a POST with neither header (curl, scripts:
# Sec-Fetch-Site alone decides, as documented). A private httpd: its
# counters are this test's alone.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 11;

my $h = start_httpd(name => 'referer', conf => <<'CONF',
<Location /ref>
    HotLimitQuota 1/1h
</Location>
CONF
    files => { 'ref/f.txt' => "ok\n" });

my $key = '/ref|127.0.0.1';
my $own = 'http://127.0.0.1:' . $h->port;

# POSTs reset=$key with header pairs @h; returns the status code.
sub reset_with {
    my @h = @_;
    return $h->{ua}->post($h->url('/hotlimit-status'), [ reset => $key ], @h)->code;
}

ok t_cmp($h->codes('/ref/f.txt', 2), '200 429', 'the key is spent (1/1h)');

my $off = $h->log_offset;
ok t_cmp(reset_with(Referer => 'https://evil.example/page'), 403,
         'no Origin, a foreign Referer: 403');
ok t_cmp(reset_with(Referer => "$own.evil.example/"), 403,
         'no Origin, a Referer whose host only starts like ours: 403');
ok t_cmp(reset_with(Referer => "$own\@evil.example/"), 403,
         'no Origin, a Referer with our origin as its userinfo: 403');
ok t_cmp(reset_with(Referer => 'http://127.0.0.1:1/hotlimit-status'), 403,
         'no Origin, a Referer of another port: 403');
ok t_cmp(reset_with(Referer => 'https://evil.example/', 'Sec-Fetch-Site' => 'same-origin'), 403,
         'a foreign Referer with a (spoofable) Sec-Fetch-Site: same-origin: 403');
ok t_cmp($h->get('/ref/f.txt')->code, 429, 'the key is still spent after the refused resets');
ok t_cmp($h->wait_log(qr/HL00301: cross-site reset refused \(Referer: https:\/\/evil\.example\/page\)/, $off) ? 1 : 0, 1,
         'error log: HL00301 names the foreign Referer');

ok t_cmp(reset_with(Referer => "$own/hotlimit-status?x=1"), 200,
         'no Origin, a Referer of this server\'s page: carried out (200)');
ok t_cmp($h->get('/ref/f.txt')->code, 200, 'after it: admitted again');
$h->get('/ref/f.txt');
ok t_cmp(reset_with(), 200, 'neither Origin nor Referer (curl): carried out, as documented');
