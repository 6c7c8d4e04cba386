# HotLimitRouteFrom for PHP front controllers, with a quota table, under
# prefork + mod_php: query:r (index.php?r=site/login, "site.login" in the
# table), falling back to the path when r is absent; and path-info
# (front.php/user/login, AcceptPathInfo On).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 19, need need_module(HLTest::hl_php_module()), need_apache_mpm('prefork');

my $mpm = hl_mpm();

my $h = start_httpd(name => 'php-routing', table => { routes => {
        'site.login'  => { max => 3, window => 60 },
        '/index.php'  => { max => 5, window => 60 },
        '/user/login' => { max => 2, window => 60 },
    } }, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
<Files "index.php">
    HotLimitRouteFrom query:r
</Files>
<Location /front.php>
    HotLimitRouteFrom path-info
    AcceptPathInfo On
</Location>
CONF

# query:r - both spellings of site/login share the "site.login" bucket.
my $res = $h->get('/index.php?r=site/login');
ok t_cmp($res->code, 200, "[$mpm] /index.php?r=site/login admitted");
ok t_cmp($res->content, qr/^php ok\nroute=\/site\/login\nremaining=2\nr=site\/login\n/,
         "[$mpm] PHP ran and sees HOTLIMIT_ROUTE=/site/login, 2 left");
ok t_cmp($res->header('RateLimit-Policy'), '"3/1m";q=3;w=60', "[$mpm] ... the site.login quota (3/60s)");
$res = $h->get('/index.php?r=site%2Flogin');
ok t_cmp($res->code, 200, "[$mpm] /index.php?r=site%2Flogin admitted");
ok t_cmp($res->content, qr/route=\/site\/login\nremaining=1\n/, "[$mpm] ... same bucket (1 left)");
ok t_cmp($h->codes('/index.php?r=site.login&x=1', 1), '200', "[$mpm] ?r=site.login&x=1: same bucket, the last one");
$res = $h->get('/index.php?r=site/login');
ok t_cmp($res->code, 429, "[$mpm] the 4th, ?r=site/login, rejected");
ok t_cmp($res->content !~ /php ok/ ? 1 : 0, 1, "[$mpm] ... before PHP ran");
ok t_cmp($h->codes('/index.php?r=site%2Flogin', 1), '429', "[$mpm] ?r=site%2Flogin rejected too");

# Another r value is another route (unmatched here): never limited.
$res = $h->get('/index.php?r=site/other');
ok t_cmp($res->code, 200, "[$mpm] ?r=site/other admitted");
ok t_cmp($res->content, qr/route=-\n/, "[$mpm] ... matched no route (no HOTLIMIT_ROUTE)");
ok t_cmp($h->codes('/index.php?r=site/other', 4), '200 200 200 200', "[$mpm] ... and never limited");

# No r: the path is the route (/index.php, 5/60s), a separate bucket.
$res = $h->get('/index.php');
ok t_cmp($res->code, 200, "[$mpm] /index.php without r admitted");
ok t_cmp($res->content, qr/route=\/index\.php\nremaining=4\n/, "[$mpm] ... falls back to the path: route /index.php, 4 left");
ok t_cmp($h->codes('/index.php?x=site/login', 1), '200', "[$mpm] another argument is no route either: /index.php");

# path-info: /front.php/user/login is the route /user/login.
$res = $h->get('/front.php/user/login');
ok t_cmp($res->code, 200, "[$mpm] /front.php/user/login admitted");
ok t_cmp($res->content, qr/route=\/user\/login\nremaining=1\n.*path_info=\/user\/login/s,
         "[$mpm] PATH_INFO /user/login is the route");
ok t_cmp($h->codes('/front.php/user/login/', 2), '200 429',
         "[$mpm] /front.php/user/login/ shares it; the 3rd is rejected (2/60s)");
ok t_cmp($h->get('/front.php')->header('X-HL-Route'), undef,
         "[$mpm] /front.php without PATH_INFO: the path, no route");
$h->stop;
