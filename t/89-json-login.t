# The JSON-login recipe (conf-examples/json-login.conf; issue 26 item 8,
# case s002: a Next.js/Express-style login, the e-mail in a JSON body) as
# shipped, in front of a login that reads php://input (mod_php, under
# prefork) or its Perl twin (a CGI reading STDIN, under event):
#  - failed attempts per account from any address: the 6th wrong password
#    for alice from a 6th address is refused (JSON 429) and never reaches
#    the application;
#  - the account is the e-mail as the application reads it, or folded
#    harder: case, a +tag, an escaped key, a duplicate key (PHP keeps the
#    last), another Content-Type: all the same account;
#  - the browser that logged in before keeps its device budget: its owner
#    still logs in, where a fresh client is refused;
#  - the per-address line: the 11th attempt a minute from one address;
# and the WordPress recipe names HotLimitBan and the fail2ban jail.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use LWP::UserAgent ();
use HotLimitTable;

plan tests => 13;

my $mpm = hl_mpm();
my $php = hl_have_php();
my ($examples) = grep { -d } map { "$_/conf-examples" }
    grep { defined } $ENV{HOTLIMIT_TEST_WORK}, "$FindBin::Bin/..";
sub slurp { local (@ARGV, $/) = @_; <> }

# The application: alice@example.com's password is "right"; a success is
# 200 {"ok":true}, a failure 401 {"ok":false}. Each run appends to runs.
my $login_php = <<'PHP';
<?php
file_put_contents(__DIR__ . '/runs', "x", FILE_APPEND | LOCK_EX);
$in = json_decode(file_get_contents('php://input'), true);
$email = is_array($in) && is_string($in['email'] ?? null) ? strtolower(trim($in['email'])) : '';
$accounts = ['alice@example.com' => 'right'];
header('Content-Type: application/json');
if (isset($accounts[$email]) && ($in['password'] ?? null) === $accounts[$email]) {
    echo json_encode(['ok' => true, 'email' => $email]);
} else {
    http_response_code(401);
    echo json_encode(['ok' => false]);
}
PHP
my $login_cgi = <<'PERL';
#!/usr/bin/perl
use strict;
use JSON::PP ();
use Fcntl qw(:flock);
(my $dir = $ENV{SCRIPT_FILENAME}) =~ s{/[^/]+$}{};
open my $f, '>>', "$dir/runs" or die "runs: $!";
flock $f, LOCK_EX; print {$f} 'x'; close $f;
my $body = '';
{ local $/; $body = <STDIN> // q(); }   # all of it: a CGI under mod_cgid that leaves a chunked body unread gets its answer reset
my $in = eval { JSON::PP->new->decode($body) };
my $email = ref $in eq 'HASH' && defined $in->{email} && !ref $in->{email}
            ? lc($in->{email} =~ s/^\s+|\s+$//gr) : '';
my %accounts = ('alice@example.com' => 'right');
if (exists $accounts{$email} && ($in->{password} // '') eq $accounts{$email}) {
    print "Content-Type: application/json\r\n\r\n{\"ok\":true}";
} else {
    print "Status: 401 Unauthorized\r\nContent-Type: application/json\r\n\r\n{\"ok\":false}";
}
PERL
my $app = $php ? 'login.php' : 'login.cgi';

my $h = start_httpd(name => 'json-login',
    files => { 'login.php' => $login_php, 'login.cgi' => $login_cgi },
    setup => sub { chmod 0755, $_[0]->dir . '/htdocs/login.cgi' },
    conf => hl_cgi_conf() . <<"CONF" . slurp("$examples/json-login.conf"));
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Directory "\@DIR\@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
Alias /api/login "\@DIR\@/htdocs/$app"
CONF

my $ua = LWP::UserAgent->new(timeout => 20, keep_alive => 0, max_redirect => 0);
my $url = "http://127.0.0.1:${\ $h->port}/api/login";

# POSTs $json from address $from (with cookie $cookie and Content-Type
# $type, application/json unless given); returns the response.
sub login {
    my ($json, $from, $cookie, $type) = @_;
    return $ua->post($url, 'Content-Type' => $type // 'application/json',
                     'X-Forwarded-For' => $from, ($cookie ? (Cookie => $cookie) : ()),
                     Content => $json);
}
sub runs { -s $h->dir . '/htdocs/runs' // 0 }
my $wrong = '{"email":"alice@example.com","password":"guess"}';
my $right = '{"email":"alice@example.com","password":"right"}';

# The owner logs in from her browser: 200 and a device cookie.
my $res = login($right, '198.51.100.1');
my ($device) = ($res->header('Set-Cookie') // '') =~ /^(login_device=[^;]+)/;
ok t_cmp($res->code . ' ' . ($device ? 'cookie' : 'no cookie'), '200 cookie',
         "[$mpm $app] the owner logs in: 200 and a device cookie");

# Five wrong passwords from five addresses, then a sixth.
my @codes = map { login($wrong, "203.0.113.$_")->code } 1 .. 5;
ok t_cmp("@codes", '401 401 401 401 401', "[$mpm] 5 wrong passwords from 5 addresses: 401 each");
$res = login($wrong, '203.0.113.6');
ok t_cmp($res->code . ' ' . ($res->header('Content-Type') // ''), qr{^429 application/json},
         "[$mpm] the 6th, from a 6th address: a JSON 429");
ok t_cmp(runs(), 6, "[$mpm] ... which never reached the application (6 runs)");

# The same account, spelled or sent otherwise, from fresh addresses.
my %variants = (
    'upper case'       => '{"email":"Alice@Example.COM","password":"g"}',
    'a +tag'           => '{"email":"alice+work@example.com","password":"g"}',
    'an escaped key'   => '{"em\\u0061il":"alice@example.com","password":"g"}',
    'a duplicate key'  => '{"email":"bob@example.com","email":"alice@example.com","password":"g"}',
);
my $n = 10;
for my $what (sort keys %variants) {
    ok t_cmp(login($variants{$what}, '203.0.113.' . $n++)->code, 429,
             "[$mpm] the account with $what: 429");
}
ok t_cmp(login($wrong, '203.0.113.20', undef, 'text/plain')->code, 429,
         "[$mpm] the JSON body under Content-Type text/plain: 429");

# The owner: a fresh client is refused, her browser is not.
ok t_cmp(login($right, '198.51.100.2')->code, 429,
         "[$mpm] the right password from a fresh client: 429 (the account is spent)");
$res = login($right, '198.51.100.1', $device);
ok t_cmp($res->code, 200, "[$mpm] the owner's browser with its device cookie: 200");

# The per-address line: 10 attempts a minute from one address.
@codes = map { login(qq({"email":"user$_\@example.org","password":"x"}), '192.0.2.9')->code } 1 .. 11;
ok t_cmp("@codes", '401 401 401 401 401 401 401 401 401 401 429',
         "[$mpm] 11 attempts a minute on 11 accounts from one address: the 11th refused");

# The WordPress recipe names the ban and the fail2ban jail.
my $wp = slurp("$examples/wordpress.conf");
ok t_cmp(($wp =~ /HotLimitBan \d/ ? 'ban ' : '') . ($wp =~ m{fail2ban/.*jail|jail.d/hotlimit} ? 'jail' : ''),
         'ban jail', 'wordpress.conf: HotLimitBan and the fail2ban jail');
