# by=A+B: keyed by both together (issue 26 item 7): failures per account
# per address, as Auth0's brute-force protection counts them.
#
# - HotLimitQuota 2/1m by=ip+param:log count=failures (Require all denied:
#   every attempt fails with 403): the third failure of one account from
#   one address is refused; the same account from another address, and
#   another account from the same address, have their own counts; norm=
#   (lower) folds the account part; a request without the account keys
#   as the address (the absent part keys as ip, as a lone key would).
# - Bans: refusals of an A+B key are not refusals of the address, so
#   nobody is banned through an account; a by=ip quota's refusals still
#   ban (the ban is live).
# - The table's "by" takes A+B too.
# - Device cookies bind to the account part: alice's browser, which logged
#   in from address A, still gets in while attempts from A lock alice there.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 19;

my $h = start_httpd(name => 'keys-together',
    files => { 'dlogin.cgi' => hl_login_cgi("'alice' => 'right'") },
    setup => sub { chmod 0755, glob($_[0]->dir . '/htdocs/*.cgi') },
    table => {
    routes => {
        '/t/pair' => { max => 1, window => '1m', by => 'ip+header:X-User' },
    } }, conf => hl_cgi_xff_conf() . <<'CONF');
HotLimitQuotaTable @DIR@/table.json
<Location /dlogin.cgi>
    HotLimitQuota 2/1h by=ip+param:u count=failures
    HotLimitDeviceCookie hl_device 1h
</Location>
HotLimitBan 2/1m 30s
<Location /login>
    HotLimitQuota 2/1m by=ip+param:log count=failures
    Require all denied
</Location>
<Location /ip>
    HotLimitQuota 1/1m
</Location>
CONF

my ($A, $B, $C) = ('198.51.100.1', '198.51.100.2', '198.51.100.3');
sub at { my ($ip, $path, $n, @h) = @_; $h->codes($path, $n, 'X-Forwarded-For' => $ip, @h) }

ok t_cmp(at($A, '/login?log=alice', 3), '403 403 429',
         'account alice from A: 2 failures, then refused');
ok t_cmp(at($A, '/login?log=bob', 1), '403',
         'another account from the same address: its own count');
ok t_cmp(at($B, '/login?log=alice', 3), '403 403 429',
         'the same account from another address: its own count');
ok t_cmp(at($A, '/login?log=%20ALICE%20', 1), '429',
         'norm= folds the account part (" ALICE " is alice)');
ok t_cmp(at($A, '/login', 3), '403 403 429',
         'no account: keyed by the address (its own count)');
ok t_cmp(at($C, '/login?log=alice', 1), '403',
         'a third address: alice still has attempts there');

# A has now been refused 5 times by A+B keys: not an address key, no ban.
ok t_cmp(at($A, '/login?log=carol', 1), '403',
         'refusals of A+B keys never ban the address (carol still tries)');
ok t_cmp(at($A, '/ip/x', 1), '200', 'nor refuse it elsewhere');
# A by=ip quota's refusals still ban: the ban is live.
ok t_cmp(at($C, '/ip/x', 3), '200 429 429', 'by=ip: 1 admitted, 2 refused');
ok t_cmp(at($C, '/login?log=dave', 1), '429',
         'two refusals of an address key ban the address (control)');

# --- the table's "by": ip+header:X-User ---------------------------------------
ok t_cmp(at($A, '/t/pair', 2, 'X-User' => 'u1'), '200 429',
         'table by=ip+header:X-User: 1 admitted, then refused');
ok t_cmp(at($B, '/t/pair', 1, 'X-User' => 'u1'), '200', 'table: another address, its own');
ok t_cmp(at($A, '/t/pair', 1, 'X-User' => 'u2'), '200', 'table: another user, its own');

# --- the refusal log: an A+B refusal is a "shared key" one (fail2ban skips it)
my ($line) = grep { /HL00100: rejected.*key=\S*198\.51\.100\.1\+p:/ } $h->log_lines(0);
ok t_cmp($line // '', qr/HL00100: rejected shared key client=198\.51\.100\.1 route=\/login/,
         'the refusal of an A+B key is logged as a shared key, not the address\'s');

# --- the key as the status page shows it ---------------------------------------
my $st = $h->status || {};
my $json = JSON::PP->new->canonical->encode($st);
ok t_cmp($json =~ /198\.51\.100\.1\+p:[0-9a-f]{16}/ ? 1 : 0, 1,
         'the key is the address and the hashed account: "ADDRESS+p:HASH"');

# --- device cookies bind to the account part ------------------------------------
my $D = '198.51.100.9';
my $res = $h->get('/dlogin.cgi?u=alice&p=right', 'X-Forwarded-For' => $D);
my ($cookie) = ($res->header('Set-Cookie') // '') =~ /^(hl_device=[^;]+)/;
ok t_cmp($res->code . ' ' . ($cookie ? 'cookie' : 'none'), '303 cookie',
         "alice logs in from $D: a device cookie");
ok t_cmp(at($D, '/dlogin.cgi?u=alice&p=guess', 3), '403 403 429',
         "an attacker from $D locks alice there (2 failures, then refused)");
ok t_cmp($h->get('/dlogin.cgi?u=alice&p=right', 'X-Forwarded-For' => $D,
                 Cookie => $cookie // 'none')->code, 303,
         "alice's browser with its cookie still gets in from $D");
ok t_cmp($h->get('/dlogin.cgi?u=alice&p=right', 'X-Forwarded-For' => $D)->code, 429,
         '... and without it, the locked line refuses');
