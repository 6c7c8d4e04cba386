# HotLimitBan 3/1m 5s: a client refused 3 times within a minute by quotas
# of the server keyed by its address is banned from the whole server
# (every route, limited or not) for 5 s, with Retry-After = the time left;
# the ban is logged once (HL00102), listed in ?json and lifted by POST
# reset=KEY; concurrent refusals start exactly one ban. Refusals by a
# shared budget (by=global) or an account's (by=header:X-User) never count
# toward a ban: nobody gets a bystander banned by spending them.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET POST);
use Time::HiRes qw(sleep time);
use HLTest;

plan tests => 40;

# The status page, from the main server (the vhost's own would be banned).
sub status_json {
    Apache::TestRequest::module('default');
    my $j = hl_json(GET('/hotlimit-status?json')) || {};
    Apache::TestRequest::module('hl_ban');
    return $j;
}

sub bans_of {
    my ($j) = @_;
    return grep { $_->{key} =~ /ban\|127\.0\.0\.1$/ } @{ $j->{bans} || [] };
}

sub ban_lines {
    my ($off) = @_;
    return grep { /HL00102/ } hl_lines_since(hl_error_log(), $off);
}

Apache::TestRequest::module('hl_ban');
my $off = hl_offset(hl_error_log());

my @c = map { GET('/ban-b/')->code } 1 .. 4;
ok t_cmp("@c", '200 429 429 429', '1 admitted, then 3 refusals');
my $t0 = time;
my $res = GET '/ban-free/';
ok t_cmp($res->code, 429, 'banned: another (unlimited) route is refused');
my $ra = $res->header('Retry-After') // '';
ok t_cmp($ra =~ /^\d+$/ && $ra >= 1 && $ra <= 5 ? 1 : 0, 1,
         "Retry-After $ra is the time left (1..5)");

my @lines = hl_wait_lines(hl_error_log(), $off, sub { grep { /HL00102/ } @_ }, 5);
@lines = grep { /HL00102/ } @lines;
ok t_cmp(scalar @lines, 1, 'the ban is logged once');
ok t_cmp($lines[0] // '', qr/HL00102: ban started client=127\.0\.0\.1 key=\S*ban\|127\.0\.0\.1 after=3 refusals within=3\/1m for=5s retry_after=5/,
         'HL00102 names client, key, threshold and duration');

my @b = bans_of(status_json());
ok t_cmp(scalar @b, 1, '?json lists the ban');
ok t_cmp(@b && $b[0]{left_s} >= 1 && $b[0]{left_s} <= 5 ? 1 : 0, 1,
         'with its time left');

Apache::TestRequest::module('default');
ok t_cmp(GET('/hotlimit-status?metrics')->content,
         qr/^hotlimit_bans_active 1$/m, '?metrics: hotlimit_bans_active 1');
ok t_cmp(GET('/hotlimit-status')->content,
         qr{<tr class="ban"><td class="client key">127\.0\.0\.1</td><td class="host">[^<]*:\d+</td>.*?<button type="submit">lift</button>}s,
         'HTML page: the ban, client address and host apart, with a button that lifts it');
Apache::TestRequest::module('hl_ban');
ok t_cmp(GET('/ban-free/')->code, 429, 'more requests while banned: refused');
ok t_cmp(GET('/ban-dry/')->code, 200, 'HotLimitDryRun On scope: never refused');
ok t_cmp(GET('/ban-off/')->code, 200, 'HotLimitEngine Off scope: never refused');
sleep 0.2 while time - $t0 < 5.3;
ok t_cmp(GET('/ban-free/')->code, 200, 'after 5 s: admitted again');
ok t_cmp(scalar(bans_of(status_json())), 0, '?json: no ban in force');
ok t_cmp(scalar(ban_lines($off)), 1, 'still one ban line: no ban while banned');

# --- concurrency: 20 refusals at once start exactly one ban --------------------
my $off2 = hl_offset(hl_error_log());
my $port = hl_port();
my $codes = hl_hammer(port => $port, path => '/ban-b/', total => 20, conc => 20);
ok t_cmp($codes->{429} // 0, 20, '20 parallel requests, all refused');
sleep 1;
ok t_cmp(scalar(ban_lines($off2)), 1, 'exactly one ban started (HL00102 once)');
ok t_cmp(GET('/ban-free/')->code, 429, 'banned again');

# --- POST reset=KEY lifts the ban ---------------------------------------------
my ($ban) = bans_of(status_json());
Apache::TestRequest::module('default');
$res = POST '/hotlimit-status', content => [ reset => $ban ? $ban->{key} : 'none' ];
Apache::TestRequest::module('hl_ban');
ok t_cmp($res->code, 200, 'POST reset=' . ($ban ? $ban->{key} : '?'));
ok t_cmp(GET('/ban-free/')->code, 200, 'the ban is lifted');

# POST reset=CLIENT (the address alone) lifts its bans too.
hl_hammer(port => $port, path => '/ban-b/', total => 3, conc => 1);
ok t_cmp(GET('/ban-free/')->code, 429, 'banned once more');
Apache::TestRequest::module('default');
$res = POST '/hotlimit-status', content => [ reset => '127.0.0.1' ];
Apache::TestRequest::module('hl_ban');
ok t_cmp($res->content, qr/"removed":[1-9]/, 'POST reset=127.0.0.1 removes the ban');
ok t_cmp(GET('/ban-free/')->code, 200, 'lifted by the client address');

# --- bans count only a client's own refusals -----------------------------------
# Addresses come from X-Forwarded-For (the vhost trusts the test client).
sub as_client {
    my ($ip, $path, @h) = @_;
    return GET($path, 'X-Forwarded-For' => $ip, @h)->code;
}
sub banned_addresses {
    return join ' ', sort map { $_->{key} =~ /ban\|(.*)$/ ? $1 : () }
                          @{ status_json()->{bans} || [] };
}

# An attacker spends the site-wide (by=global) budget; a visitor is then
# refused 3 times: the refusals are not the visitor's doing.
ok t_cmp(as_client('203.0.113.66', '/ban-global/'), 200, 'by=global: the attacker spends the 1/1m budget');
ok t_cmp(join(' ', map { as_client('203.0.113.77', '/ban-global/') } 1 .. 3), '429 429 429',
         'by=global: a visitor is refused 3 times');
ok t_cmp(as_client('203.0.113.77', '/ban-free/'), 200,
         'by=global: the visitor is not banned (3 refusals by a shared budget)');
ok t_cmp(banned_addresses() =~ /203\.0\.113\.77/ ? 1 : 0, 0, '?json: no ban of the visitor');

# An attacker spends alice's account budget (by=header:X-User); alice,
# from her office, retries 3 times.
ok t_cmp(as_client('203.0.113.66', '/ban-user/', 'X-User' => 'alice'), 200,
         "by=header: the attacker spends alice's 1/1m");
ok t_cmp(join(' ', map { as_client('198.51.100.5', '/ban-user/', 'X-User' => 'alice') } 1 .. 3),
         '429 429 429', 'by=header: alice is refused 3 times');
ok t_cmp(as_client('198.51.100.5', '/ban-free/'), 200,
         "by=header: alice's address is not banned");
ok t_cmp(banned_addresses() =~ /198\.51\.100\.5/ ? 1 : 0, 0, "?json: no ban of alice's address");

# by=ip refusals still ban; so do those of a by=header quota whose header
# is absent (its key fell back to the client address: its own spending).
ok t_cmp(join(' ', map { as_client('203.0.113.88', '/ban-b/') } 1 .. 4), '200 429 429 429',
         'by=ip: 1 admitted, 3 refusals');
ok t_cmp(as_client('203.0.113.88', '/ban-free/'), 429, 'by=ip: banned');
ok t_cmp(join(' ', map { as_client('203.0.113.99', '/ban-user/') } 1 .. 4), '200 429 429 429',
         'by=header without the header (keyed by the address): 1 admitted, 3 refusals');
ok t_cmp(as_client('203.0.113.99', '/ban-free/'), 429, '... banned: the address was its key');
# Lift them, so that no later test sees a ban in force.
Apache::TestRequest::module('default');
POST('/hotlimit-status', content => [ reset => $_ ]) for qw(203.0.113.88 203.0.113.99);
Apache::TestRequest::module('hl_ban');

# --- the table's "ban" (a private httpd with a table of its own) -----------
use HotLimitTable ();
my $h = HotLimitTable::start_httpd(name => 'table-ban', table => {
    ban => { after => 2, within => '1m', for => '3s' },
    routes => { '/tb' => { max => 1, window => 60 } },
}, conf => "HotLimitQuotaTable \@DIR\@/table.json\nHotLimitReloadInterval 1\n");
ok t_cmp($h->codes('/tb', 3), '200 429 429', 'table: 1 admitted, 2 refusals');
$res = $h->get('/elsewhere');
ok t_cmp($res->code, 429, 'table ban: another route refused');
ok t_cmp(($res->header('Retry-After') // 0) <= 3 ? 1 : 0, 1,
         'Retry-After within the table\'s 3 s');

# A request refused because its client is banned is counted at the route
# it asked for (it is decided with the route's quota, in one call to the
# store), as banned, never as the rule's rejection (issue 27): /tb shows
# 1 admitted, 2 rejected by its rule, 2 banned.
ok t_cmp($h->codes('/tb', 2), '429 429', 'table ban: /tb refused while banned');
my $metrics = $h->metrics;
my %d = map { my ($n) = $metrics =~ m{^hotlimit_requests_total\{route="/tb",decision="$_"\} (\d+)$}m; ($_ => $n // 'none') }
        qw(admitted rejected banned);
ok t_cmp("$d{admitted} $d{rejected} $d{banned}", '1 2 2',
         '... and counted at /tb: 1 admitted, 2 rejected by its rule, 2 banned');
