# Device tokens are bound to the quota they were earned under and to the
# account exactly as the client sent it (issue 25, item 2), and account
# keys are a keyed hash under the server's secret. The application is a
# CASE-SENSITIVE login (a PHP script under prefork with mod_php, and a CGI
# script under both MPMs): "ALICE" and "alice+m@example.org" are accounts of
# their own, which the attacker owns.
#  - the attacker logs in as ALICE again and again (each time a success and
#    a fresh cookie): none of those cookies opens alice's locked account line
#    (norm=lower folds ALICE into alice's key); the same with norm=email and
#    alice+m@example.org against alice@example.org;
#  - a cookie earned by alice herself in another section is refused here;
#  - alice's own browser still gets in while her line is locked;
#  - two servers with different HotLimitSecretFile give one account name two
#    different keys, the same file the same key, and the status page's
#    lookup finds the account by name under either;
#  - with HotLimitSecretFile no secret is generated and HL01350 (which says
#    earlier cookies are no longer valid) is not logged; without it HL01350
#    says that no HotLimitSecretFile is set.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLTest qw(hl_json);

my $php = hl_have_php();
my @apps = ('cgi', $php ? ('php') : ());
plan tests => 9 * @apps + 6;

my $secret1 = 'binding-test-secret-number-one-0123456789';
my $secret2 = 'binding-test-secret-number-two-0123456789';

# The application: exact (case- and tag-sensitive) account names. alice's
# password is "right"; the attacker's accounts ALICE and alice+m@... have
# "mallory". A success is a 303, a failure a 403.
my $cgi = hl_login_cgi("'alice' => 'right', 'ALICE' => 'mallory', 'alice\@example.org' => 'right', 'alice+m\@example.org' => 'mallory'");
my $phpapp = hl_login_php("'alice' => 'right', 'ALICE' => 'mallory', 'alice\@example.org' => 'right', 'alice+m\@example.org' => 'mallory'");

my %files;
my $sections = '';
for my $ext (@apps) {
    $files{"$_.$ext"} = $ext eq 'php' ? $phpapp : $cgi for qw(login other mail);
    $sections .= <<"CONF";
<Location /login.$ext>
    HotLimitQuota 3/1h by=param:u count=failures
    HotLimitDeviceCookie hl_device 1h
</Location>
<Location /other.$ext>
    HotLimitQuota 3/1h by=param:u count=failures
    HotLimitDeviceCookie hl_device 1h
</Location>
<Location /mail.$ext>
    HotLimitQuota 3/1h by=param:u count=failures norm=email
    HotLimitDeviceCookie hl_device 1h
</Location>
CONF
}
my $conf = hl_cgi_conf() . <<"CONF";
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
LogLevel info
<Directory "\@DIR\@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
HotLimitSecretFile \@DIR\@/secret.key
<Location /hotlimit-status>
    SetHandler hotlimit-status
    HotLimitStatus On
</Location>
$sections
CONF

# Starts a server named $name whose secret file holds $key.
sub server {
    my ($name, $key) = @_;
    return start_httpd(name => $name, files => \%files, conf => $conf,
        setup => sub {
            my $self = shift;
            chmod 0755, glob($self->dir . '/htdocs/*.cgi');
            HotLimitTable::_spew($self->dir . '/secret.key', $key);
            chmod 0600, $self->dir . '/secret.key';
        });
}
my $h = server('binding', $secret1);
my $ua = LWP::UserAgent->new(timeout => 20, keep_alive => 0, max_redirect => 0);

# Posts a login for $user/$password to $path of server $srv from address
# $from, with the device cookie $cookie if defined; returns "CODE" plus
# "c" when the answer sets a device cookie, and that cookie.
sub login {
    my ($srv, $path, $user, $password, $from, $cookie) = @_;
    my $res = $ua->post($srv->url($path), [ u => $user, p => $password ],
                        'X-Forwarded-For' => $from,
                        defined $cookie ? (Cookie => "hl_device=$cookie") : ());
    # count=failures counts a failure just after the response.
    sleep 0.15 if $res->code == 403;
    my ($tok) = map { /^hl_device=([^;]+)/ ? $1 : () } $res->header('Set-Cookie');
    return ($res->code . ($tok ? 'c' : ''), $tok);
}

my $n = 0;
sub addr { '203.0.113.' . (++$n % 250 + 1) }

for my $ext (@apps) {
    my $login = "/login.$ext";
    # alice logs in from her own browser.
    my ($code, $legit) = login($h, $login, 'alice', 'right', '192.0.2.1');
    ok t_cmp($code, '303c', "$ext: alice logs in and gets a device cookie");

    # The attacker logs in as ALICE (its own account) three times.
    my (@codes, @stolen);
    for (1 .. 3) {
        my ($c, $t) = login($h, $login, 'ALICE', 'mallory', addr());
        push @codes, $c;
        push @stolen, $t if $t;
    }
    ok t_cmp("@codes", '303c 303c 303c', "$ext: the attacker logs in as ALICE three times, a cookie each time");

    # ... and locks alice's account line from other addresses.
    @codes = map { (login($h, $login, 'alice', "guess$_", addr()))[0] } 1 .. 4;
    ok t_cmp("@codes", '403 403 403 429', "$ext: alice's line is locked (3 failures an hour)");

    # Not one of ALICE's cookies reaches alice's password check.
    @codes = map { my $t = $_; map { (login($h, $login, 'alice', "guess$_", addr(), $t))[0] } 1 .. 2 } @stolen;
    ok t_cmp("@codes", join(' ', ('429') x 6),
             "$ext: ALICE's cookies never open alice's locked line");

    # A cookie alice earned in another section is refused here.
    my (undef, $elsewhere) = login($h, "/other.$ext", 'alice', 'right', '192.0.2.2');
    ok t_cmp(defined $elsewhere ? 1 : 0, 1, "$ext: alice gets a cookie in another section");
    ok t_cmp((login($h, $login, 'alice', 'right', '192.0.2.2', $elsewhere))[0], '429',
             "$ext: ... which is refused here (alice's line stays locked for it)");

    # alice's own browser still gets in.
    ok t_cmp((login($h, $login, 'alice', 'right', '192.0.2.1', $legit))[0], '303c',
             "$ext: alice's own browser still logs in while her line is locked");

    # norm=email: the attacker owns alice+m@example.org, folded into
    # alice@example.org's key.
    my $mail = "/mail.$ext";
    my (undef, $mlegit) = login($h, $mail, 'alice@example.org', 'right', '192.0.2.3');
    my (undef, $mstolen) = login($h, $mail, 'alice+m@example.org', 'mallory', addr());
    @codes = map { (login($h, $mail, 'alice@example.org', "guess$_", addr()))[0] } 1 .. 4;
    push @codes, map { (login($h, $mail, 'alice@example.org', "guess$_", addr(), $mstolen))[0] } 1 .. 3;
    ok t_cmp("@codes", '403 403 403 429 429 429 429',
             "$ext: norm=email: alice+m\@'s cookie never opens alice\@'s locked line");
    ok t_cmp((login($h, $mail, 'alice@example.org', 'right', '192.0.2.3', $mlegit))[0], '303c',
             "$ext: norm=email: alice\@'s own browser still logs in");
}

# --- keyed hashes ------------------------------------------------------------
# Returns the key the status lookup of server $srv gives "Alice" under the
# first login section's line, or ''.
sub lookup_key {
    my $srv = shift;
    my $j = hl_json($ua->get($srv->url('/hotlimit-status?json&lookup=Alice'))) || {};
    my ($k) = grep { ($_->{route} // '') eq "/login.$apps[0]" } @{ $j->{lookup}{keys} || [] };
    return $k ? $k->{key} // '' : '';
}
my $k1 = lookup_key($h);
ok t_cmp($k1, qr/\|p:[0-9a-f]{16}$/, 'the status lookup finds alice\'s account key by name');
my $g = server('binding-other', $secret2);
my $k2 = lookup_key($g);
ok t_cmp($k2 ne '' && $k2 ne $k1 ? 'differ' : "same ($k1 / $k2)", 'differ',
         'another HotLimitSecretFile: another key for the same account');
$g->stop(keep => 1);
HotLimitTable::_spew($g->dir . '/secret.key', $secret1);
$g->start;
ok t_cmp(lookup_key($g), $k1, 'the same HotLimitSecretFile: the same key (servers sharing a store agree)');

# --- HL01350's wording -------------------------------------------------------
my $log = HotLimitTable::_slurp($h->error_log) // '';
ok t_cmp($log =~ /HL01350/ ? 'HL01350 logged' : 'none', 'none',
         'with HotLimitSecretFile, no "generated a new secret" message');
ok t_cmp($log, qr/HL02050: the server's secret is HotLimitSecretFile's; none is generated/,
         '... it says the configured secret is used');
my $s = start_httpd(name => 'binding-gen', conf => "<Location /x>\n    HotLimitQuota 3/1m by=param:u\n</Location>\n");
my $o = $s->wait_log(qr/HL01350/, 0, 10) // '';
ok t_cmp($o, qr/HL01350: no HotLimitSecretFile: generated a new secret in \S+hotlimit-device\.secret/,
         'without HotLimitSecretFile: HL01350 says a secret was generated, and why');
