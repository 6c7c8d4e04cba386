# Debian's own DokuWiki (package dokuwiki) behind the module, with the
# recipe of conf-examples/dokuwiki.conf: its real login form is
# brute-forced and answers 429 after exactly the quota, pages are still
# served meanwhile, and the right password works again once the window has
# passed. Logins DokuWiki takes however they are sent count (u and p on a
# GET, an Authorization header), one account guessed from many addresses
# is limited too, and the action spellings DokuWiki reads otherwise than
# the module (X-DokuWiki-Do, do=re-sendpwd) are refused. An attacker who
# locks the account admin from five addresses keeps fresh browsers out,
# but not the browser that logged in as admin before (its device cookie).
# t/run-httpd-tests.sh prepares a private copy of the installed
# DokuWiki (code, configuration, data) with an admin account.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use HTTP::Cookies ();
use HTTP::Request ();
use LWP::UserAgent ();
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my $dw = ($ENV{HOTLIMIT_TEST_WORK} // '') . '/dokuwiki';
plan tests => 24, need {
    'mod_php and the prefork MPM' => hl_have_php(),
    "Debian's dokuwiki package (apt-get install dokuwiki)" => -f "$dw/www/doku.php" };

# The recipe, its login quotas at 3 per 5 s per address and 4 per 5 s per
# account for a short test, served at / instead of /dokuwiki; addresses
# from X-Forwarded-For (mod_remoteip) stand for several clients.
my $recipe = HotLimitTable::_slurp("$FindBin::Bin/../conf-examples/dokuwiki.conf")
          // HotLimitTable::_slurp("$ENV{HOTLIMIT_TEST_WORK}/conf-examples/dokuwiki.conf");
$recipe =~ s{/etc/apache2/hotlimit-dokuwiki\.json}{\@DIR\@/table.json};
$recipe =~ s{<Location /dokuwiki/doku\.php>}{<Location /doku.php>}g;
$recipe =~ s{<Location /dokuwiki>}{<Location />}g;
$recipe =~ s{HotLimitQuota 5/1m 30/1h}{HotLimitQuota 3/5s} or die 'recipe: no per-address quota';
$recipe =~ s{HotLimitQuota 10/1h by=param:u count=failures}{HotLimitQuota 4/5s by=param:u count=failures}
    or die 'recipe: no per-account quota counting failures';
$recipe =~ s{HotLimitDeviceCookie hotlimit_device 30d}{HotLimitDeviceCookie hotlimit_device 1h}
    or die 'recipe: no device cookie';
$recipe =~ s{^HotLimitBan .*$}{}m;
my $h = start_httpd(name => 'dokuwiki',
    table => { routes => { '/resendpwd' => { max => 3, window => 3600 } } },
    setup => sub {
        my $self = shift;
        $self->{conf} = "$recipe\n<Directory \"$dw/www\">\n    Require all granted\n</Directory>\n"
                      . "DocumentRoot \"$dw/www\"\n"
                      . "RemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 127.0.0.1\n";
        $self->{conf} =~ s/\@DIR\@/$self->{dir}/g;
        $self->_write_conf;
    });

my $ua = LWP::UserAgent->new(timeout => 60, cookie_jar => HTTP::Cookies->new,
                             max_redirect => 0);
my $base = $h->url('/doku.php');

# Returns the security token of DokuWiki's login form (and takes its cookies).
sub login_form {
    my $res = $ua->get("$base?id=start&do=login");
    my ($tok) = $res->content =~ /name="sectok" value="([0-9a-f]*)"/;
    return ($res, $tok // '');
}

# Posts the login form (as client $from, if given; through browser $browser,
# default $ua); returns the response. The per-account line counts failures
# in the log_transaction hook, just after the response: a pause after a
# failure keeps the next attempt from being decided before it counts.
sub login {
    my ($password, $tok, $from, $browser) = @_;
    my $res = ($browser // $ua)->post("$base?id=start",
        [ do => 'login', id => 'start', u => 'admin', p => $password, sectok => $tok ],
        $from ? ('X-Forwarded-For' => $from) : ());
    sleep 0.15 if $res->code == 403;
    return $res;
}

my ($form, $tok) = login_form();
ok t_cmp($form->code, 200, 'the login form is served');
ok t_cmp($form->content =~ /id="dw__login"/ ? 1 : 0, 1, "... it is DokuWiki's");

# DokuWiki answers a failed login with 403 and its form again.
my (@codes, $dokuwiki_answers);
for my $i (1 .. 4) {
    my $res = login('wrong-guess', $tok);
    push @codes, $res->code;
    $dokuwiki_answers++ if $res->content =~ /dw__login/;
    ($form, $tok) = login_form() if $res->code != 429;
}
ok t_cmp("@codes $dokuwiki_answers", '403 403 403 429 3',
         'three failed logins reach DokuWiki (its 403 and form), the fourth is refused');
my $res = login('wrong-guess', $tok);
ok t_cmp($res->header('Retry-After') // 0, qr/^[1-5]$/, 'the refusal says when to retry');
ok t_cmp($res->content !~ /dw__login/ ? 1 : 0, 1, '... and PHP did not run for it');

# An attacker pads the login POST: up to 8 MiB (PHP's post_max_size) the
# module reads it all, and a chunked POST is refused.
$res = $ua->post("$base?id=start", [ pad => ('x' x (8 * 1024 * 1024 - 2000)), do => 'login',
                                    u => 'admin', p => 'guess', sectok => $tok ]);
ok t_cmp($res->code, 429, 'a login padded to nearly 8 MiB, credentials last, still counts');
{
    my $sent = 0;
    $res = $ua->request(HTTP::Request->new(POST => "$base?id=start",
        [ 'Content-Type' => 'application/x-www-form-urlencoded',
          'X-Forwarded-For' => '198.51.100.9' ],
        sub { $sent++ ? '' : 'do=show&id=start' }));
    ok t_cmp($res->code, 403, 'a chunked POST (no Content-Length) is refused');
}

my $page = $ua->get("$base?id=start");
ok t_cmp($page->code, 200, 'pages are still served meanwhile');
ok t_cmp($form->code, 200, 'and so is the GET that shows the login form');
ok t_cmp(login('correct-horse', $tok)->code, 429, 'the right password too is refused within the window');

# DokuWiki tries u and p on any request, whatever do says, and the
# credentials of an Authorization header: each is a login attempt.
sleep 5.2;
@codes = map { $ua->get("$base?id=start&u=admin&p=guess$_")->code } 1 .. 3;
push @codes, $ua->get("$base?id=start", Authorization => 'Basic YWRtaW46Z3Vlc3M0')->code;
ok t_cmp("@codes", qr/^(?!429)\d+ (?!429)\d+ (?!429)\d+ 429$/,
         'a GET carrying u and p (no do) is a login attempt; so is an Authorization header');
$res = $ua->get("$base?id=start", Authorization => 'Basic YWRtaW46Z3Vlc3M1',
               'X-Forwarded-For' => '198.51.100.8');
ok t_cmp($res->code . ($res->content =~ /dw__login/ ? ' dokuwiki' : ''), '403',
         'an Authorization header is refused by httpd (DokuWiki would try its credentials)');
$res = $ua->get("$base?id=start", 'X-DokuWiki-Do' => 'login', 'X-Forwarded-For' => '198.51.100.7');
ok t_cmp($res->code . ($res->content =~ /dw__login/ ? ' dokuwiki' : ''), '403',
         'an X-DokuWiki-Do header is refused by httpd');
$res = $ua->post("$base?id=start", [ do => 're-sendpwd', u => 'admin' ],
                 'X-Forwarded-For' => '198.51.100.7');
ok t_cmp($res->code . ($res->content =~ /dw__/ ? ' dokuwiki' : ''), '403',
         'so is do=re-sendpwd (DokuWiki would strip the dash and reset the password)');

# One account guessed from many addresses: 4 attempts, whatever the address.
sleep 5.2;
@codes = map { login('wrong-guess', $tok, "203.0.113.$_")->code } 1 .. 5;
ok t_cmp("@codes", '403 403 403 403 429',
         'the account admin gets 4 attempts in all, from five addresses');

sleep 5.2;
($form, $tok) = login_form();
$res = login('correct-horse', $tok);
ok t_cmp($res->code == 302 || $res->code == 200 ? 1 : 0, 1,
         'after the window the right password is accepted (' . $res->code . ')');
my ($device) = grep { /^hotlimit_device=/ } $res->header('Set-Cookie');
ok t_cmp($device // '', qr/^hotlimit_device=2\.\d+\.[\w-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/,
         '... it sets the device cookie (none was set on the 403s)');
$page = $ua->get("$base?id=start");
ok t_cmp($page->content =~ /do=logout/ ? 1 : 0, 1, '... and the admin is logged in');

# Device cookies: the attacker locks admin from five addresses (no cookie
# of its own); a fresh browser is refused until the window ends; the
# browser that logged in above (it holds the device cookie) logs in at once.
my $attacker = LWP::UserAgent->new(timeout => 60, max_redirect => 0);
@codes = map { login('wrong-guess', $tok, "203.0.113.$_", $attacker)->code } 11 .. 15;
ok t_cmp("@codes", '403 403 403 403 429', 'an attacker locks admin from five addresses');
my $fresh = LWP::UserAgent->new(timeout => 60, cookie_jar => HTTP::Cookies->new, max_redirect => 0);
my $fresh_form = $fresh->get("$base?id=start&do=login");
my ($fresh_tok) = $fresh_form->content =~ /name="sectok" value="([0-9a-f]*)"/;
$res = login('correct-horse', $fresh_tok // '', '198.51.100.20', $fresh);
ok t_cmp($res->code, 429, 'a fresh browser with the right password is refused');
($form, $tok) = login_form();
$res = login('correct-horse', $tok, '192.0.2.20');
ok t_cmp($res->code, 302, 'the browser that logged in before logs in at once (device cookie)');
ok t_cmp($ua->get("$base?id=start")->content =~ /do=logout/ ? 1 : 0, 1, '... and is logged in');
$res = login('correct-horse', $fresh_tok // '', '198.51.100.20', $fresh);
ok t_cmp($res->code, 429, 'the fresh browser is still refused');
sleep 5.2;
$fresh_form = $fresh->get("$base?id=start&do=login");
($fresh_tok) = $fresh_form->content =~ /name="sectok" value="([0-9a-f]*)"/;
$res = login('correct-horse', $fresh_tok // '', '198.51.100.20', $fresh);
ok t_cmp($res->code, 302, 'after the window the fresh browser logs in');
