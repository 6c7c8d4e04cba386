# Device cookies (HotLimitDeviceCookie, HotLimitSecretFile): an attacker
# who spends an account's budget from many addresses locks out fresh
# clients only. A browser that logged in to that account earlier holds a
# cookie bound to it and logs in at once; forged, expired, other accounts',
# other secrets' and malformed cookies give no way around the account line
# and break nothing. The login application is a CGI script (both MPMs) and
# a PHP script (prefork with mod_php) answering 303 to the right password
# and 403 to a wrong one. The generated secret is stored 0600 in
# DefaultRuntimeDir, kept across restarts, and rotating it (replacing the
# file, graceful restart) invalidates every cookie (and, account keys being
# hashed under it, starts account counters anew). A short
# HotLimitSecretFile fails configtest, naming the directive. The WordPress
# recipe (conf-examples/wordpress.conf, against a stand-in for
# wp-login.php) hands the cookie to a real login only.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(encode_base64url);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my $php = hl_have_php();
my @apps = ('/login.cgi', $php ? ('/login.php') : ());
plan tests => 24 * @apps + 2 + 14 + 2 + ($php ? 7 + 3 : 0);

my $mods = Apache::Test::vars('libexecdir') || '/usr/lib/apache2/modules';
my $secret = 'device-cookie-test-secret-0123456789';
my $window = 300;   # stepped over on the test clock, never waited out

# The login application: alice's password is "right", bob's "bobpw"; a
# success is a 303 to /home, a failure a 403.
my $cgi = hl_login_cgi("alice => 'right', bob => 'bobpw'", 1);
my $phpapp = hl_login_php("'alice' => 'right', 'bob' => 'bobpw'", 1);

# CGI under either MPM, clients' addresses from X-Forwarded-For.
my $cgi_conf = hl_cgi_conf() . <<"CONF";
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Directory "\@DIR\@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
CONF

# It reads its stdin to the end: under mod_cgid a CGI that leaves a body
# unread has its answer reset (a 500 instead of the page).
my $denied = "#!/bin/sh\ncat >/dev/null\nprintf 'Status: 200 OK\\r\\nContent-Type: text/plain\\r\\n\\r\\nan error page\\n'\n";
my $h = start_httpd(name => 'device', clock => 1, files => { 'login.cgi' => $cgi, 'login.php' => $phpapp,
                                                 'guarded.cgi' => $cgi, 'denied.cgi' => $denied },
    setup => sub {
        my $self = shift;
        chmod 0755, map { $self->dir . "/htdocs/$_" } qw(login.cgi guarded.cgi denied.cgi);
        HotLimitTable::_spew($self->dir . '/device.key', $secret);
    }, conf => <<"CONF");
$cgi_conf
LogLevel info hotlimit:debug
HotLimitSecretFile \@DIR\@/device.key
<Location /login.cgi>
    HotLimitQuota 3/${window}s by=param:u count=failures
    HotLimitDeviceCookie hl_device 1h
</Location>
<Location /login.php>
    HotLimitQuota 3/${window}s by=param:u count=failures
    HotLimitDeviceCookie hl_device 1h
</Location>
<Location /guarded.cgi>
    HotLimitQuota 3/${window}s by=param:u count=failures
    HotLimitDeviceCookie hl_device 1h
    <If "-n %{HTTP:X-Deny}">
        Require all denied
    </If>
    ErrorDocument 403 /denied.cgi
</Location>
CONF

my $ua = LWP::UserAgent->new(timeout => 20, keep_alive => 0, max_redirect => 0);

# Posts a login for $user/$password to $app from address $from, with the
# device cookie $cookie if defined and the headers @headers; returns the
# response.
# count=failures counts a failure in the log_transaction hook, just after the
# response: a client faster than that would have its next attempt decided
# before the last one counts (issue 17, item 1). A short pause after each
# failure keeps this test about device cookies.
sub login {
    my $res = send_login(@_);
    sleep 0.15 if $res->code >= 400 && $res->code != 429;
    return $res;
}

sub send_login {
    my ($app, $user, $password, $from, $cookie, @headers) = @_;
    return $ua->post($h->url($app), [ u => $user, p => $password ],
                     'X-Forwarded-For' => $from, @headers,
                     defined $cookie ? (Cookie => "theme=dark; hl_device=$cookie") : ());
}

# Returns the device token a response sets, or ''.
sub token_of {
    my ($set) = grep { /^hl_device=/ } $_[0]->header('Set-Cookie');
    return $set && $set =~ /^hl_device=([^;]*)/ ? $1 : '';
}

# Returns a token for the account as sent, $account, under the quota
# $scope (e.g. "|/login.cgi|param:u"), expiring at $expiry, made with
# $key_secret.
sub make_token {
    my ($scope, $account, $expiry, $key_secret) = @_;
    return "2.$expiry." . encode_base64url(hmac_sha256("2.$expiry|" . length($scope) . ":$scope$account",
                                                       $key_secret));
}

# Returns the quota scope the module bound the last cookie set to (HL01354
# in the error log after $offset).
sub account_key {
    my $offset = shift;
    my $line = $h->wait_log(qr/HL01354: device cookie hl_device set for an account under/, $offset, 5)
        // return '';
    return $line =~ /account under (\S+)/ ? $1 : '';
}

for my $app (@apps) {
    # A failed login earns nothing.
    my $res = login($app, 'carol', 'guess', '192.0.2.50');
    ok t_cmp($res->code . ' ' . (token_of($res) || 'no cookie'), '403 no cookie',
             "$app: a failed login sets no device cookie");

    # bob and alice log in from their own browsers.
    $res = login($app, 'bob', 'bobpw', '192.0.2.2');
    my $bob = token_of($res);
    ok t_cmp($res->code, 303, "$app: bob logs in");
    my $off = $h->log_offset;
    $res = login($app, 'alice', 'right', '192.0.2.1');
    my $tok = token_of($res);
    ok t_cmp($res->code, 303, "$app: alice logs in from her browser");
    my ($set) = grep { /^hl_device=/ } $res->header('Set-Cookie');
    ok t_cmp($set // '', qr/^hl_device=2\.\d{10}\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/,
             "$app: ... and gets the device cookie (HttpOnly, SameSite=Lax, no Secure over plain HTTP)");
    my ($expiry) = $tok =~ /^2\.(\d+)\./;
    ok t_cmp(abs(($expiry // 0) - 3600 - $h->wall_now) <= 5 ? 1 : 0, 1, "$app: it expires in an hour");
    my $key = account_key($off);
    ok t_cmp($key, "|$app|param:u", "$app: bound to its quota (server, section, key)");
    ok t_cmp($tok, make_token($key, 'alice', $expiry, $secret),
             "$app: the token is version.expiry.HMAC-SHA256(secret, version.expiry|scope length:scope account as sent)");

    # The attacker spends alice's budget from five addresses.
    my @codes = map { login($app, 'alice', "guess$_", "203.0.113.$_")->code } 1 .. 5;
    ok t_cmp("@codes", '403 403 403 429 429', "$app: an attacker locks alice from five addresses");
    $res = login($app, 'alice', 'right', '198.51.100.1');
    ok t_cmp($res->code, 429, "$app: a fresh browser with the right password is refused");

    # Nothing but a real token of alice's gets around the account line.
    (my $flipped = $tok) =~ s/(.)$/$1 eq 'A' ? 'B' : 'A'/e;
    my %bad = (
        'a forged MAC'           => $flipped,
        'a changed expiry'       => "2." . ($expiry + 1000) . substr($tok, 2 + length $expiry),
        'an expired token'       => make_token($key, 'alice', int($h->wall_now) - 10, $secret),
        "another account's"      => $bob,
        'another secret'         => make_token($key, 'alice', int($h->wall_now) + 3600, 'x' x 40),
        'garbage'                => 'garbage%00;=',
        'an over-long value'     => 'A' x 6000,
        'an empty value'         => '',
    );
    for my $what (sort keys %bad) {
        ok t_cmp(login($app, 'alice', 'right', '198.51.100.2', $bad{$what})->code, 429,
                 "$app: $what gives no way around the account line");
    }
    ok t_cmp(login($app, 'alice', 'right', '198.51.100.3',
                   make_token($key, 'alice', int($h->wall_now) + 600, $secret))->code, 303,
             "$app: (a token the test makes with the secret is taken: the refusals above are not the test's mistakes)");

    # Alice's browser, holding its cookie, logs in at once, however often
    # the attacker tries.
    $res = login($app, 'alice', 'right', '192.0.2.1', $tok);
    ok t_cmp($res->code, 303, "$app: alice's browser with its device cookie logs in at once");
    my $fresh = token_of($res);
    ok t_cmp($fresh ? 1 : 0, 1, "$app: ... and gets a fresh cookie");
    @codes = map { login($app, 'alice', "guess$_", "203.0.113.$_")->code } 6 .. 7;
    ok t_cmp("@codes", '429 429', "$app: the attacker is still refused");
    # The device has a budget of its own: three failures, then refused.
    @codes = map { login($app, 'alice', "typo$_", '192.0.2.1', $fresh)->code } 1 .. 4;
    ok t_cmp("@codes", '403 403 403 429', "$app: the browser's own mistakes count on its own key");

    # After the window a fresh browser logs in again (the window passes on
    # httpd's test clock).
    $h->pass_time($window + 0.3);
    ok t_cmp(login($app, 'alice', 'right', '198.51.100.1')->code, 303,
             "$app: after the window the fresh browser logs in");
    ok t_cmp($h->get('/index.html')->code, 200, "$app: the server is alive");
}

# httpd refuses a login after the module admitted it (Require), and its
# ErrorDocument answers 200: an error page earns no cookie.
{
    my $res = login('/guarded.cgi', 'alice', 'right', '192.0.2.30', undef, 'X-Deny' => 1);
    ok t_cmp($res->code . ' ' . ($res->content =~ /an error page/ ? 'error page' : 'other')
             . ' ' . (token_of($res) ? 'cookie' : 'no cookie'), '200 error page no cookie',
             'an ErrorDocument answering 200 after a refusal sets no cookie');
    ok t_cmp(token_of(login('/guarded.cgi', 'alice', 'right', '192.0.2.30')) ? 1 : 0, 1,
             '(the same login, not refused, gets one)');
}

# --- the generated secret ----------------------------------------------------
my $g = start_httpd(name => 'device-gen', files => { 'login.cgi' => $cgi },
    setup => sub { chmod 0755, $_[0]->dir . '/htdocs/login.cgi' }, conf => <<"CONF");
$cgi_conf
<Location /login.cgi>
    HotLimitQuota 2/1m by=param:u count=failures
    HotLimitDeviceCookie hl_device 1d
</Location>
CONF
my $file = $g->dir . '/run/hotlimit-device.secret';
my @st = stat $file;
ok t_cmp(@st ? sprintf('%d %04o', $st[7], $st[2] & 07777) : 'missing', '32 0600',
         'no HotLimitSecretFile: a 32-byte secret is generated in DefaultRuntimeDir, mode 0600');
my $before = HotLimitTable::_slurp($file) // '';
my $res = $ua->post($g->url('/login.cgi'), [ u => 'alice', p => 'right' ], 'X-Forwarded-For' => '192.0.2.1');
my $tok = token_of($res);
ok t_cmp($tok ? 1 : 0, 1, 'a login earns a cookie made with it');

# Returns the codes of: two wrong guesses on alice, a fresh browser and the
# browser holding $cookie with the right password.
sub lock_and_try {
    my $cookie = shift;
    return join ' ', map({ my $c = $ua->post($g->url('/login.cgi'), [ u => 'alice', p => "guess$_" ],
                                             'X-Forwarded-For' => "203.0.113.$_")->code;
                           sleep 0.15;
                           $c } 1 .. 3),
        $ua->post($g->url('/login.cgi'), [ u => 'alice', p => 'right' ],
                  'X-Forwarded-For' => '198.51.100.1')->code,
        $ua->post($g->url('/login.cgi'), [ u => 'alice', p => 'right' ],
                  'X-Forwarded-For' => '192.0.2.1', Cookie => "hl_device=$cookie")->code;
}
$g->stop(keep => 1);
$g->start;
ok t_cmp(HotLimitTable::_slurp($file) // '', $before, 'a full restart keeps the secret');
ok t_cmp(lock_and_try($tok), '403 403 429 429 303',
         '... and the cookie issued before it still gets its holder in');

# Rotation: replace the file, graceful restart: every cookie is invalid.
open my $fh, '>', "$file.tmp" or die $!;
print {$fh} 'r' x 32;
close $fh;
chmod 0600, "$file.tmp";
rename "$file.tmp", $file or die $!;
my $o = $g->log_offset;
kill 'USR1', $g->pid;
ok t_cmp($g->wait_log(qr/HL01355: device cookies: secret read from/, $o, 15) ? 1 : 0, 1,
         'rotation: the graceful restart reads the replaced secret');
$g->wait_up;
sleep 1;
# Account keys are hashed under the secret (2.1): the new one keys alice
# afresh, so the guesses lock her again before the old cookie is tried.
ok t_cmp(lock_and_try($tok) =~ /^403 403 429 429 (\d+)$/ ? $1 : 'unexpected', 429,
         '... and the old cookie no longer gets around the account line (locked again under the new key)');
ok t_cmp(HotLimitTable::_slurp($file), 'r' x 32, '... and the replaced secret is kept');

# --- configtest --------------------------------------------------------------
my $httpd = Apache::Test::vars('httpd');
for my $case ([ 'a short key file', 'short', "HotLimitSecretFile \@F\@" ],
              [ 'a missing key file', undef, "HotLimitSecretFile \@F\@" ],
              [ 'a bad lifetime', undef, "<Location /x>\n HotLimitDeviceCookie dev 401d\n</Location>" ],
              [ 'a bad cookie name', undef, "<Location /x>\n HotLimitDeviceCookie a=b 1h\n</Location>" ]) {
    my ($what, $content, $line) = @$case;
    my $t = HotLimitTable::Httpd->_new(name => 'device-cfg', conf => '');
    my $keyfile = $t->dir . '/key';
    HotLimitTable::_spew($keyfile, $content) if defined $content;
    $line =~ s/\@F\@/$keyfile/g;
    open my $cf, '>>', $t->{conf_file} or die $!;
    print {$cf} "\n$line\n";
    close $cf;
    my $out = `$httpd -t -f $t->{conf_file} 2>&1`;
    my $directive = $line =~ /(HotLimit\w+)/ ? $1 : '?';
    ok t_cmp($? != 0 && $out =~ /\Q$directive\E/ ? 'refused naming it' : $out, 'refused naming it',
             "configtest: $what is refused, naming $directive");
}
my $t = HotLimitTable::Httpd->_new(name => 'device-cfg-ok', conf => '');
HotLimitTable::_spew($t->dir . '/key', 'k' x 32);
chmod 0644, $t->dir . '/key';
open my $cf, '>>', $t->{conf_file} or die $!;
print {$cf} "\nHotLimitSecretFile " . $t->dir . "/key\n<Location /x>\n HotLimitDeviceCookie __Host-dev 400d\n</Location>\n";
close $cf;
my $out = `$httpd -t -f $t->{conf_file} 2>&1`;
ok t_cmp($? == 0 ? 'Syntax OK' : $out, 'Syntax OK', 'configtest: a 32-byte key and a 400-day cookie are accepted');
ok t_cmp($out, qr/HL01356: HotLimitSecretFile: '[^']+' is readable by every user/,
         '... with a warning that every user may read the key');
chmod 0600, $t->dir . '/key';
$out = `$httpd -t -f $t->{conf_file} 2>&1`;
ok t_cmp($out !~ /HL01356/ ? 'no warning' : $out, 'no warning', '... and none once it is 0600');

# --- over TLS: the cookie is Secure -------------------------------------------
# HTTP/1.1 and (event: mod_http2 serves streams there) HTTP/2 over TLS, with
# curl; skipped without mod_ssl or openssl.
{
    my $tls_why = !-f "$mods/mod_ssl.so" ? 'mod_ssl not installed'
                : system('openssl version >/dev/null 2>&1') ? 'openssl not installed' : '';
    my $tls_port = HotLimitTable::free_port();
    my $s;
    unless ($tls_why) {
        $s = start_httpd(name => 'device-tls', start => 0, files => { 'login.cgi' => $cgi },
            setup => sub { chmod 0755, $_[0]->dir . '/htdocs/login.cgi' }, conf => <<"CONF");
$cgi_conf
@{[ hl_tls_conf($mods, $tls_port) ]}
<Location /login.cgi>
    HotLimitQuota 3/1m by=param:u count=failures
    HotLimitDeviceCookie hl_device 1h
</Location>
CONF
        hl_make_cert($s->dir);
        $s->start;
    }
    # Returns the device cookie's Set-Cookie line of a login over TLS with
    # curl option $opt, or what curl said.
    my $tls_login = sub {
        my $opt = shift;
        my $out = `curl -k -s -D - -o /dev/null $opt -d 'u=alice&p=right' 'https://127.0.0.1:$tls_port/login.cgi' 2>&1`;
        my ($line) = $out =~ /^(set-cookie: hl_device=[^\r\n]*)/mi;
        return $line // "no cookie: $out";
    };
    if ($tls_why) {
        skip($tls_why, 0) for 1 .. 2;
    } else {
        ok t_cmp($tls_login->('--http1.1'), qr/; HttpOnly; SameSite=Lax; Secure$/,
                 'over TLS (HTTP/1.1) the cookie is Secure');
        if (hl_mpm() eq 'event' && -f "$mods/mod_http2.so" && `curl -V 2>/dev/null` =~ /\bHTTP2\b/) {
            my $h2 = $tls_login->('--http2');
            ok t_cmp($h2, qr/; HttpOnly; SameSite=Lax; Secure$/, 'over TLS (HTTP/2) too');
        } else {
            skip('HTTP/2 streams: event with mod_http2 and curl --http2 only', 0);
        }
    }
}

# --- the WordPress recipe ------------------------------------------------------
# A stand-in for wp-login.php that answers as WordPress does: a failed
# login 200 and the form again, a right password (from the POST body only)
# a 302, both empty fields with a session cookie a 302 (a login by
# session), and the postpass and lostpassword actions a 302 whatever the
# password.
exit 0 unless $php;
my $wp_login = <<'PHP';
<?php
$action = $_REQUEST['action'] ?? 'login';
if ($action === 'postpass' || ($action === 'lostpassword' && $_SERVER['REQUEST_METHOD'] === 'POST')) {
    header('Location: /wp-login.php?checkemail=confirm', true, 302);
    exit;
}
$log = $_POST['log'] ?? '';
$pwd = $_POST['pwd'] ?? '';
if ((strtolower(trim($log)) === 'admin' && $pwd === 'right')
    || ($log === '' && $pwd === '' && isset($_COOKIE['wordpress_logged_in']))) {
    header('Location: /wp-admin/', true, 302);
    exit;
}
echo "login form\n";
PHP
my $examples = "$FindBin::Bin/../conf-examples";
$examples = "$ENV{HOTLIMIT_TEST_WORK}/conf-examples" unless -d $examples;
my $wp = start_httpd(name => 'device-wp', files => { 'wp-login.php' => $wp_login },
                     conf => HotLimitTable::_slurp("$examples/wordpress.conf")
                           . "\nRemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 127.0.0.1\n");
my $from = 0;
# Posts $body (urlencoded) to $path from a new address, with the extra
# headers @h; returns the response (after a pause when WordPress said no).
sub wp_post {
    my ($path, $body, @h) = @_;
    my $res = $ua->post($wp->url($path), 'Content-Type' => 'application/x-www-form-urlencoded',
                        Content => $body, 'X-Forwarded-For' => '203.0.113.' . ++$from, @h);
    sleep 0.15 if $res->code == 200;
    return $res;
}
# Returns "CODE" plus " cookie" when the response sets the device cookie
# $name (default WordPress's).
sub wp_answer_named {
    my ($res, $name) = @_;
    return $res->code . (grep({ /^\Q$name\E=/ } $res->header('Set-Cookie')) ? ' cookie' : '');
}
sub wp_answer { wp_answer_named($_[0], 'wp_hotlimit_device') }
$res = wp_post('/wp-login.php', 'log=admin&pwd=right&wp-submit=Log+In&redirect_to=%2Fwp-admin%2F');
ok t_cmp(wp_answer($res), '302 cookie', 'WordPress: a real login gets the device cookie');
my ($wp_cookie) = map { /^(wp_hotlimit_device=[^;]+)/ ? $1 : () } $res->header('Set-Cookie');
ok t_cmp(wp_answer(wp_post('/wp-login.php', 'action=postpass&log=admin&pwd=x')), '302',
         'WordPress: a postpass (302 whatever the password) naming admin gets none');
ok t_cmp(wp_answer(wp_post('/wp-login.php?log=admin&pwd=x', 'testcookie=1',
                           Cookie => 'wordpress_logged_in=someone')), '302',
         'WordPress: nor a login by session cookie with admin in the query');
my @wp = map { wp_answer(wp_post('/wp-login.php', "log=admin&pwd=guess$_")) } 1 .. 11;
ok t_cmp("@wp", join(' ', ('200') x 10, '429'),
         'WordPress: 10 failed logins (200) an hour on admin, from any address');
ok t_cmp(wp_answer(wp_post('/wp-login.php', 'log=admin&pwd=right')), '429',
         'WordPress: a fresh browser with the right password is refused');
ok t_cmp(wp_answer(wp_post('/wp-login.php', 'log=admin&pwd=right', Cookie => $wp_cookie // '')),
         '302 cookie', 'WordPress: the browser with the device cookie logs in');
ok t_cmp(wp_answer(wp_post('/wp-login.php?x=1', 'log=admin&pwd=right', Cookie => $wp_cookie // '')),
         '429', 'WordPress: (the cookie counts only on the login form\'s own POST)');

# --- the php-site-endpoints recipe ---------------------------------------------
# Its /user/login: the cookie is earned by a POST that logs in, not by the
# form (a GET, with ?email= to fill it in), nor by a failed POST (403).
my $user_login = <<'PHP';
<?php
if ($_SERVER['REQUEST_METHOD'] !== 'POST') { echo "the form\n"; exit; }
if (($_POST['email'] ?? '') === 'alice@example.org' && ($_POST['password'] ?? '') === 'right') {
    header('Location: /home', true, 302);
    exit;
}
http_response_code(403);
echo "wrong\n";
PHP
(my $endpoints = HotLimitTable::_slurp("$examples/php-site-endpoints.conf")) =~ s/^\s*LoadModule .*$//mg;
my $ep = start_httpd(name => 'device-endpoints', files => { 'user/login' => $user_login },
    setup => sub {
        my $self = shift;
        $self->{conf} =~ s{\$\{APACHE_LOG_DIR\}}{$self->{dir}}g;
        $self->_write_conf;
    },
    conf => "$endpoints\n<Location /user/login>\n    SetHandler application/x-httpd-php\n</Location>\n");
$res = $ep->get('/user/login?email=alice@example.org');
ok t_cmp(wp_answer_named($res, 'hotlimit_device'), '200', 'endpoints: the form (a GET naming the account) gets no cookie');
$res = $ua->post($ep->url('/user/login'), [ email => 'alice@example.org', password => 'wrong' ]);
ok t_cmp(wp_answer_named($res, 'hotlimit_device'), '403', 'endpoints: a failed POST gets none');
$res = $ua->post($ep->url('/user/login'), [ email => 'alice@example.org', password => 'right' ]);
ok t_cmp(wp_answer_named($res, 'hotlimit_device'), '302 cookie', 'endpoints: a POST that logs in gets one');
