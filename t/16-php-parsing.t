# Request values read as PHP reads them (spec section 8), under prefork +
# mod_php: PHP echoes what it saw, the module must have counted the same.
#
# (a) max_input_vars: HotLimitRouteFrom query:r with
#     ?r=site/login&a0=1&...&a999=1&r=site/index - PHP stops reading after
#     1000 variables and sees r=site/login, so the request counts against
#     the table route /site/login (the module used to take /site/index).
# (b) by=cookie:sid: PHP rawurldecodes cookie values, so sid=abc,
#     sid=%61bc and sid=a%62c are one client (one counter); '+' stays '+'.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 18, need need_module(HLTest::hl_php_module()), need_apache_mpm('prefork');

my $mpm = hl_mpm();

my $php = <<'PHP';
<?php
header('Content-Type: text/plain');
echo "route=", $_SERVER['HOTLIMIT_ROUTE'] ?? '-', "\n";
echo "remaining=", $_SERVER['HOTLIMIT_REMAINING'] ?? '-', "\n";
echo "r=", json_encode($_GET['r'] ?? null), "\n";
echo "sid=", json_encode($_COOKIE['sid'] ?? null), "\n";
PHP

my $h = start_httpd(name => 'php-parsing',
    files => { 'app.php' => $php, 'bycookie/app.php' => $php },
    table => { routes => {
        '/site/login' => { max => 3, window => 60 },
        '/site/index' => { max => 100, window => 60 },
    } }, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
<Files "app.php">
    HotLimitRouteFrom query:r
</Files>
<Location /bycookie>
    HotLimitQuota 3/1m by=cookie:sid
</Location>
CONF

# --- (a) max_input_vars = 1000 ---------------------------------------------
# r=site/login, N fillers, r=site/index: PHP reads 1000 variables.
sub query {
    my $fillers = shift;
    return '/app.php?r=site/login&' . join('&', map { "a$_=1" } 0 .. $fillers - 1)
        . '&r=site/index';
}

# 998 fillers: the second r is the 1000th variable, PHP reads it.
my $res = $h->get(query(998));
ok t_cmp($res->code, 200, "[$mpm] r=site/index as the 1000th variable: admitted");
ok t_cmp($res->content, qr{^route=/site/index\n.*^r="site\\/index"$}ms,
         "[$mpm] ... PHP and the module both read site/index");

# 1000 fillers (the issue's query): the second r is the 1002nd, unread.
for my $left (2, 1, 0) {
    $res = $h->get(query(1000));
    ok t_cmp($res->code, 200, "[$mpm] r=site/index as the 1002nd variable: admitted ($left left)");
    ok t_cmp($res->content, qr{^route=/site/login\nremaining=$left\nr="site\\/login"$}m,
             "[$mpm] ... PHP sees site/login, counted against /site/login");
}
$res = $h->get(query(1000));
ok t_cmp($res->code, 429, "[$mpm] the 4th is rejected by the /site/login quota (3/60s)");
ok t_cmp($res->content !~ /route=/ ? 1 : 0, 1, "[$mpm] ... before PHP ran");
ok t_cmp($h->codes('/app.php?r=site/login', 1), '429', "[$mpm] plain ?r=site/login shares that counter");
ok t_cmp($h->codes(query(998), 1), '200', "[$mpm] /site/index is still open");

# --- (b) by=cookie:sid, rawurldecoded ----------------------------------------
# Returns "STATUS SID REMAINING" for a request with the Cookie header $c:
# the sid PHP saw (JSON) and the requests its counter has left.
sub cookie_seen {
    my $c = shift;
    my $res = $h->get('/bycookie/app.php', Cookie => $c);
    my ($sid) = $res->content =~ /^sid=(.*)$/m;
    my ($left) = $res->content =~ /^remaining=(.*)$/m;
    return join ' ', $res->code, $sid // '?', $left // '?';
}

my @seen = map { cookie_seen("sid=$_") } 'abc', '%61bc', 'a%62c';
ok t_cmp("@seen", '200 "abc" 2 200 "abc" 1 200 "abc" 0',
         "[$mpm] sid=abc, sid=%61bc, sid=a%62c: PHP sees abc each time, one counter");
ok t_cmp($h->codes('/bycookie/app.php', 1, Cookie => 'sid=%61%62%63'), '429',
         "[$mpm] the 4th spelling (sid=%61%62%63) is rejected");
ok t_cmp($h->codes('/bycookie/app.php', 1, Cookie => 'sid=abd'), '200',
         "[$mpm] another session (sid=abd) has its own counter");

# '+' is not a space in a cookie value: x+y and x%2By are one, x%20y another.
@seen = map { cookie_seen("sid=$_") } 'x+y', 'x%2By', 'x%20y';
ok t_cmp("@seen", '200 "x+y" 2 200 "x+y" 1 200 "x y" 2',
         "[$mpm] sid=x+y and sid=x%2By share a counter, sid=x%20y does not");

# The first sid wins in PHP, and for the module.
$res = $h->get('/bycookie/app.php', Cookie => 'sid=%61%62%63; sid=fresh');
ok t_cmp($res->code, 429, "[$mpm] 'sid=%61%62%63; sid=fresh' is abc's: rejected");
ok t_cmp(cookie_seen('sid=fresh; sid=abc'), '200 "fresh" 2',
         "[$mpm] 'sid=fresh; sid=abc': PHP sees fresh, and so does the module");
$h->stop;
