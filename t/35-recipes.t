# The recipes in conf-examples/ work as their comments say, against a real
# httpd: WordPress (login, lost password on its own counter, XML-RPC, the
# REST API), a front-controller framework (?r= routes and pretty URLs from
# a JSON table), and the fail2ban filter matches the module's real log
# lines. Every conf-examples/*.conf passes configtest.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HTTP::Request ();
use feature 'state';

my $examples = "$FindBin::Bin/../conf-examples";
$examples = "$ENV{HOTLIMIT_TEST_WORK}/conf-examples" unless -d $examples;
my @confs = sort glob "$examples/*.conf";
my $fail2ban = -x '/usr/bin/fail2ban-regex' ? '/usr/bin/fail2ban-regex' : '';

plan tests => scalar(@confs) + 21 + 3;

sub slurp { local (@ARGV, $/) = @_; <> }

# Adapts a recipe to a test instance: its paths become the instance's.
sub adapt {
    my ($text, $h) = @_;
    my $dir = $h->dir;
    $text =~ s{/etc/apache2/[\w.-]+\.json}{$dir/table.json}g;
    $text =~ s{/var/www/[\w/]+}{$dir/htdocs}g;
    $text =~ s{\$\{APACHE_LOG_DIR\}}{$dir}g;
    return $text;
}

# --- every example passes configtest ---------------------------------------
for my $conf (@confs) {
    (my $name = $conf) =~ s{.*/}{};
    my $h = HotLimitTable::Httpd->_new(name => "cfg-$name", table => { routes => {} },
                                       conf => '');
    my $text = adapt(slurp($conf), $h);
    # The examples load modules only if a2enmod has not: here they are.
    $text =~ s/^\s*LoadModule .*$//mg;
    open my $fh, '>>', $h->{conf_file} or die $!;
    print {$fh} "\n$text\n";
    close $fh;
    my $httpd = Apache::Test::vars('httpd');
    my $out = `$httpd -t -f $h->{conf_file} 2>&1`;
    ok t_cmp($? == 0 ? 'Syntax OK' : $out, 'Syntax OK', "configtest: $name");
}

# --- WordPress -------------------------------------------------------------
my $wp_files = { 'wp-login.php' => "login form\n", 'xmlrpc.php' => "xmlrpc\n",
                 'wp-json/wp/v2/posts' => "[]\n", 'wp-comments-post.php' => "ok\n",
                 'index.php' => "index\n", 'wp-signup.php' => "signup\n" };
my $wp = start_httpd(name => 'wordpress', files => $wp_files,
                     conf => slurp("$examples/wordpress.conf")
                           . "\nRemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 127.0.0.1\n");
# POSTs an urlencoded $body to $path (from address $from, if given).
sub wp_post {
    my ($path, $body, $from) = @_;
    return $wp->{ua}->post($wp->url($path), 'Content-Type' => 'application/x-www-form-urlencoded',
                           Content => $body, $from ? ('X-Forwarded-For' => $from) : ())->code;
}
ok t_cmp($wp->codes('/wp-login.php', 6), '200 200 200 200 200 200',
         'WordPress: showing the login form is no login attempt');
ok t_cmp(join(' ', map { wp_post('/wp-login.php', "log=admin&pwd=guess$_") } 1 .. 6),
         '200 200 200 200 200 429', 'WordPress: login attempts 5/1m per address');
ok t_cmp(wp_post('/wp-login.php?rest_route=/x', 'log=admin&pwd=guess'), 429,
         'WordPress: rest_route= added to a login does not move it to the REST quota');
ok t_cmp(join(' ', map { wp_post('/wp-login.php', "log=editor&pwd=guess$_", "203.0.113.$_") } 1 .. 11),
         join(' ', ('200') x 10, '429'), 'WordPress: one account, 10 attempts an hour from any address');
ok t_cmp($wp->codes('/wp-login.php?action=lostpassword', 5), '200 200 200 200 200',
         'WordPress: viewing the lost-password form spends nothing');
ok t_cmp(join(' ', map { wp_post('/wp-login.php?action=lostpassword', "user_login=victim$_") } 1 .. 3)
         . ' ' . wp_post('/wp-login.php', 'action=lostpassword&user_login=victim'),
         '200 200 200 429', 'WordPress: lost password POSTs 3/1h, a POSTed action too');
ok t_cmp($wp->{ua}->post($wp->url('/wp-login.php?action=lostpassword'),
                         'Content-Type' => 'application/x-www-form-urlencoded',
                         Content => 'user_login=x')->header('Retry-After') // 0,
         qr/^\d+$/, 'WordPress: lost password refusal has Retry-After');

# WordPress's own .htaccess rewrites every path that is not a file to
# index.php: the recipe's note lets the status page through first (this
# server would not even start otherwise: it waits for /hotlimit-status).
{
    my $wr = start_httpd(name => 'wordpress-rewrite', files => $wp_files, conf => <<'CONF');
<Directory "@DIR@/htdocs">
    RewriteEngine On
    RewriteRule ^hotlimit-status$ - [L]
    RewriteRule ^index\.php$ - [L]
    RewriteCond %{REQUEST_FILENAME} !-f
    RewriteCond %{REQUEST_FILENAME} !-d
    RewriteRule . /index.php [L]
</Directory>
CONF
    ok t_cmp($wr->get('/2026/12/hello-world/')->content, "index\n",
             "WordPress's rewrite rules send other paths to index.php");
    ok t_cmp($wr->get('/hotlimit-status?json')->content, qr/^\{.*"slots"/s,
             '... and the recipe\'s RewriteRule keeps the status page');
    $wr->stop;
}
ok t_cmp($wp->codes('/xmlrpc.php', 11), join(' ', ('200') x 10, '429'),
         'WordPress: xmlrpc.php 10/1h');
my @rest = split ' ', $wp->codes('/?rest_route=/wp/v2/posts', 28)
    . ' ' . wp_post('/', 'rest_route=/wp/v2/posts') . ' ' . $wp->codes('/wp-signup.php/wp-json/wp/v2/users', 1)
    . ' ' . $wp->codes('/wp-json/wp/v2/posts', 1);
ok t_cmp(scalar(grep { $_ ne '429' } @rest), 30,
         'WordPress: one REST burst of 30, via ?rest_route=, a POSTed rest_route, /wp-signup.php/wp-json/ and /wp-json/');
ok t_cmp($rest[-1], '429', 'WordPress: the 31st at once is refused');
{
    my $res = $wp->{ua}->request(HTTP::Request->new(POST => $wp->url('/wp-comments-post.php'),
        [ 'Content-Type' => 'application/x-www-form-urlencoded', 'X-Forwarded-For' => '198.51.100.3' ],
        sub { state $n = 0; $n++ ? '' : 'comment=x' }));
    ok t_cmp($res->code, 403, 'WordPress: a POST without Content-Length (chunked) is refused');
}

# --- static files are exempt by name, not by URL ----------------------------
{
    my $text = slurp("$examples/exempt-health-assets.conf");
    $text =~ s{HotLimitQuota 300/1m}{HotLimitQuota 2/1m} or die 'exempt recipe: no site quota';
    my $ex = start_httpd(name => 'exempt', files => { 'app.css' => "x\n", 'login.php' => "l\n" },
                         conf => $text);
    ok t_cmp($ex->codes('/app.css', 3), '200 200 200', 'exempt: a static file is never limited');
    ok t_cmp($ex->codes('/login.php/x.css', 3), qr/^(?!429)\d+ (?!429)\d+ 429$/,
             'exempt: a script with PATH_INFO ending in .css is limited');
    $ex->stop;
}

# --- a front-controller framework ------------------------------------------
my $fc = start_httpd(name => 'front', table => { routes => {
        'site.login' => { limits => ['3/1m'] }, 'site.register' => { max => 2, window => 60 },
        'site.contact' => { max => 5, window => 60 } } },
    files => { 'index.php' => "front controller\n" },
    setup => sub { my $h = shift; $h->{conf} = adapt(slurp("$examples/front-controller.conf"), $h);
                   $h->_write_conf },
    conf => '');
ok t_cmp($fc->codes('/index.php?r=site/login', 2), '200 200',
         'front controller: ?r=site/login counts against site.login');
ok t_cmp($fc->codes('/site/login', 2), '200 429',
         'front controller: the pretty URL /site/login counts against the same route');
ok t_cmp($fc->codes('/index.php?r=site/login', 1), '429',
         'front controller: ?r= refused too once spent');
ok t_cmp($fc->codes('/site/register', 3), '200 200 429',
         'front controller: another route has its own quota');
ok t_cmp($fc->codes('/site/about', 3), '200 200 200', 'front controller: unlisted routes are free');
ok t_cmp($fc->get('/site/contact')->header('X-HL-Route') // '', '/site/contact',
         'front controller: HOTLIMIT_ROUTE of a pretty URL is the table route');

# --- fail2ban --------------------------------------------------------------
if (!$fail2ban) {
    skip('fail2ban-regex is not installed (apt-get install fail2ban)', 0) for 1 .. 3;
}
else {
    my $out = `$fail2ban -v '$wp->{error_log}' '$examples/fail2ban/filter.d/hotlimit.conf' 2>&1`;
    my ($matched) = $out =~ /Lines: \d+ lines, \d+ ignored, (\d+) matched/;
    # HL00100 (a refusal in full) and HL01150 (a summary of an address's
    # refusals, HotLimitLogRefusals first).
    my $refused = () = HotLimitTable::_slurp($wp->{error_log}) =~ /HL00100: rejected client=|HL01150: \d+ more refusals client=/g;
    ok t_cmp($matched // -1, $refused, "fail2ban: the filter matches each of the $refused HL00100/HL01150 lines");
    ok t_cmp($out =~ /^\|\s+127\.0\.0\.1\s/m ? 1 : 0, 1, 'fail2ban: the address to ban is the client');
    ok t_cmp($out =~ /HL00101|would reject/ ? 0 : 1, 1, 'fail2ban: nothing else is matched');
}
