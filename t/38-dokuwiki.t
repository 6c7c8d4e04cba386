# Debian's own DokuWiki (package dokuwiki) behind the module, with the
# recipe of conf-examples/dokuwiki.conf: its real login form is
# brute-forced and answers 429 after exactly the quota, pages are still
# served meanwhile, and the right password works again once the window has
# passed. t/run-httpd-tests.sh prepares a private copy of the installed
# DokuWiki (code, configuration, data) with an admin account.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use HTTP::Cookies ();
use LWP::UserAgent ();
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my $dw = ($ENV{HOTLIMIT_TEST_WORK} // '') . '/dokuwiki';
plan tests => 11, need {
    'mod_php and the prefork MPM' => hl_have_php(),
    "Debian's dokuwiki package (apt-get install dokuwiki)" => -f "$dw/www/doku.php" };

# The recipe, with the quota table's /login at 3 per 5 s for a short test.
my $recipe = HotLimitTable::_slurp("$FindBin::Bin/../conf-examples/dokuwiki.conf")
          // HotLimitTable::_slurp("$ENV{HOTLIMIT_TEST_WORK}/conf-examples/dokuwiki.conf");
$recipe =~ s{/etc/apache2/hotlimit-dokuwiki\.json}{\@DIR\@/table.json};
$recipe =~ s{/dokuwiki/doku\.php}{/doku.php}g;
$recipe =~ s{^HotLimitBan .*$}{}m;
my $h = start_httpd(name => 'dokuwiki',
    table => { routes => { '/login' => { limits => ['3/5s'] } } },
    setup => sub {
        my $self = shift;
        $self->{conf} = "$recipe\n<Directory \"$dw/www\">\n    Require all granted\n</Directory>\n"
                      . "DocumentRoot \"$dw/www\"\n";
        $self->{conf} =~ s/\@DIR\@/$self->{dir}/g;
        $self->_write_conf;
    });

my $ua = LWP::UserAgent->new(timeout => 20, cookie_jar => HTTP::Cookies->new,
                             max_redirect => 0);
my $base = $h->url('/doku.php');

# Returns the security token of DokuWiki's login form (and takes its cookies).
sub login_form {
    my $res = $ua->get("$base?id=start&do=login");
    my ($tok) = $res->content =~ /name="sectok" value="([0-9a-f]*)"/;
    return ($res, $tok // '');
}

# Posts the login form; returns the response.
sub login {
    my ($password, $tok) = @_;
    return $ua->post("$base?id=start", [ do => 'login', id => 'start', u => 'admin',
                                        p => $password, sectok => $tok ]);
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

# An attacker pads the login POST past the body limit, do=login at the end.
$res = $ua->post("$base?id=start", [ pad => ('x' x (1024 * 1024 + 100)), do => 'login',
                                    u => 'admin', p => 'guess', sectok => $tok ]);
ok t_cmp($res->code, 413, 'a login padded past the body limit is refused whole (413), not let through');

my $page = $ua->get("$base?id=start");
ok t_cmp($page->code, 200, 'pages are still served meanwhile');
ok t_cmp($form->code, 200, 'and so is the GET that shows the login form');
ok t_cmp(login('correct-horse', $tok)->code, 429, 'the right password too is refused within the window');

sleep 5.2;
($form, $tok) = login_form();
$res = login('correct-horse', $tok);
ok t_cmp($res->code == 302 || $res->code == 200 ? 1 : 0, 1,
         'after the window the right password is accepted (' . $res->code . ')');
$page = $ua->get("$base?id=start");
ok t_cmp($page->content =~ /do=logout/ ? 1 : 0, 1, '... and the admin is logged in');
