# Every quota a client request reaches is decided, and none twice (spec
# section 8): after an internal redirect (mod_rewrite in .htaccess, an
# ErrorDocument to a front controller), DirectoryIndex and MultiViews (fast
# redirects), the target's quota applies; one quota over both the first
# URL and its target counts the request once.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

my $php = Apache::Test::have_module(hl_php_module());
plan tests => 26 + 8;

sub codes { my ($url, $n) = @_; join ' ', map { GET($url)->code } 1 .. $n }

# --- .htaccess RewriteRule to a limited target ---------------------------
ok t_cmp(codes('/rw/signin', 3), '200 200 200', 'rewrite: three of 3/1m reach the target');
{
    my $res = GET '/rw/signin';
    ok t_cmp($res->code, 429, 'rewrite: the fourth through /rw/signin is refused');
    ok t_cmp($res->content !~ /TARGET/ ? 1 : 0, 1, '... and the target is not served');
    ok t_cmp($res->header('Retry-After') // 0, qr/^\d+$/, '... with Retry-After');
}
ok t_cmp(GET('/rw/target.html')->code, 429, 'rewrite: the target itself is spent as well');

# --- one quota over the URL and its rewrite target: counted once ----------
ok t_cmp(codes('/rw2/signin', 3), '200 200 200',
         'rewrite inside one quota: three requests count three, not six');
ok t_cmp(GET('/rw2/signin')->code, 429, '... the fourth is refused');
ok t_cmp(GET('/rw2/target.html')->code, 429, '... directly as well');

# --- DirectoryIndex: /di/ is served by /di/index.html --------------------
ok t_cmp(codes('/di/', 2), '200 200', 'DirectoryIndex: two of 2/1m');
{
    my $res = GET '/di/';
    ok t_cmp($res->code, 429, 'DirectoryIndex: the third /di/ is refused');
    ok t_cmp($res->content !~ /INDEX of/ ? 1 : 0, 1, '... the index is not served');
    ok t_cmp($res->header('RateLimit-Policy') // '', '"2/1m";q=2;w=60', '... with the index quota');
}
ok t_cmp(GET('/di/index.html')->code, 429, 'DirectoryIndex: the index file itself is spent');

# --- a quota for /di2/ and another for its index file ----------------------
# The access checker decides the first, fixups the second after the fast
# redirect: the second's headers and variables replace the first's, none
# is sent or logged twice.
{
    my $off = hl_offset(hl_access_log());
    my $res = GET '/di2/';
    ok t_cmp($res->code, 200, 'DirectoryIndex under two quotas: served');
    ok t_cmp($res->header('RateLimit-Policy') // '', '"20/1m";q=20;w=60',
             '... one RateLimit-Policy, the index file\'s');
    ok t_cmp($res->header('RateLimit') // '', qr/^"20\/1m";r=19;t=\d+$/,
             '... one RateLimit, the index file\'s');
    my @r = hl_access_since($off, qr{^/di2/}, 1);
    ok t_cmp(join(' ', map { "$_->{limit} $_->{rem}" } @r), '20 19',
             '... HOTLIMIT_LIMIT and HOTLIMIT_REMAINING are the index file\'s');
}

# --- MultiViews: /mv/page is served by /mv/page.html ----------------------
ok t_cmp(codes('/mv/page', 2), '200 200', 'MultiViews: two of 2/1m');
{
    my $res = GET '/mv/page';
    ok t_cmp($res->code, 429, 'MultiViews: the third /mv/page is refused');
    ok t_cmp($res->content !~ /PAGE of/ ? 1 : 0, 1, '... the page is not served');
}
ok t_cmp(GET('/mv/page.html')->code, 429, 'MultiViews: the variant itself is spent');

# --- ErrorDocument 404 to a front controller ------------------------------
for my $i (1 .. 2) {
    my $res = GET "/fc/pretty$i";
    ok t_cmp($res->content =~ /FRONT controller/ ? 1 : 0, 1,
             "ErrorDocument front controller: attempt $i reaches it");
}
{
    my $res = GET '/fc/pretty3';
    ok t_cmp($res->content !~ /FRONT controller/ ? 1 : 0, 1,
             'ErrorDocument front controller: the third does not (' . $res->code . ')');
    ok t_cmp($res->code == 429 || $res->code == 404 ? 1 : 0, 1, '... refused');
}
ok t_cmp(GET('/fc/front.html')->code, 429, 'ErrorDocument: the front controller is spent');

# --- PHP: .htaccess pretty URLs to login.php, <Files index.php> -----------
if (!$php) {
    skip('mod_php is not loaded under this MPM', 0) for 1 .. 8;
}
else {
    ok t_cmp(GET('/rwphp/signin')->content, qr/LOGIN php reached/, 'PHP rewrite: 1 reaches login.php');
    ok t_cmp(GET('/rwphp/site/login')->content, qr/LOGIN php reached/, 'PHP pretty URL: 2 reaches login.php');
    ok t_cmp(GET('/rwphp/login.php')->code, 200, 'PHP: 3 directly');
    {
        my $res = GET '/rwphp/signin';
        ok t_cmp($res->code, 429, 'PHP rewrite: the fourth is refused');
        ok t_cmp($res->content !~ /LOGIN php/ ? 1 : 0, 1, '... PHP is not reached');
    }
    ok t_cmp(GET('/rwphp/site/login')->code, 429, 'PHP pretty URL: refused too');
    ok t_cmp(codes('/dip/', 2), '200 200', '<Files index.php> behind DirectoryIndex: two of 2/1m');
    ok t_cmp(GET('/dip/')->code, 429, '... the third /dip/ is refused');
}
