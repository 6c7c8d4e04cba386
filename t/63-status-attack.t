# The status page under attack (issue 21, spec section 7: "who is hurting
# me"): a flood from one address behind a proxy (X-Forwarded-For) puts it
# first in the refusal ranking (?json top_refused, the HTML "Refused most
# (now)" table, ?metrics hotlimit_key_refusals: at most 10); the quota line
# that refused it (FILE:LINE) counts the refusals, the other line of the
# same Location does not; the ban's internal counters (rej|, ban|) are never
# listed as client keys; the account lookup finds an account's counter by
# its name (hashed as the module hashes it) and resets it; the summary line
# and ?refresh= are there.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET POST);
use HLTest;

plan tests => 24 + 2;

Apache::TestRequest::module('hl_attack');

# The two HotLimitQuota lines of /atk/login, as FILE:LINE.
my $conf = Apache::Test::vars('t_conf') . '/extra.conf';
my ($ip_line, $acct_line);
{
    open my $fh, '<', $conf or die "$conf: $!";
    my $in = 0;
    while (<$fh>) {
        $in = 1 if m{<Location /atk/login>};
        next unless $in;
        $ip_line   //= $. if /HotLimitQuota 3\/1m$/;
        $acct_line //= $. if /HotLimitQuota 50\/1m by=param:log/;
        last if m{</Location>};
    }
}
my ($ip_rule, $acct_rule) = ("$conf:$ip_line", "$conf:$acct_line");
my $if_line;
{
    open my $fh, '<', $conf or die "$conf: $!";
    my $in = 0;
    while (<$fh>) {
        $in = 1 if m{<Location /atk/if>};
        if ($in && /HotLimitQuota 1\/1m$/) { $if_line = $.; last }
    }
}
my $if_rule = "$conf:" . ($if_line // 0);

# A few refusals from a bystander, then the flood from 203.0.113.5 (the
# account "Victim" in its form field).
my @by = map { GET('/atk/login?log=someone', 'X-Forwarded-For' => '198.51.100.7')->code } 1 .. 5;
ok t_cmp("@by", '200 200 200 429 429', 'a bystander: 3 admitted, then refused');
my %codes;
$codes{ GET('/atk/login?log=Victim', 'X-Forwarded-For' => '203.0.113.5')->code }++ for 1 .. 150;
ok t_cmp("200:" . ($codes{200} // 0) . " 429:" . ($codes{429} // 0), '200:3 429:147',
         'the flood: 3 admitted, 147 refused');

# An <If> quota: its route is named "*If#HASH", its rule by FILE:LINE.
my @if = map { GET('/atk/if?probe', 'X-Forwarded-For' => '192.0.2.44')->code } 1 .. 2;
ok t_cmp("@if", '200 429', 'an <If> quota: 1 admitted, 1 refused');

# --- ?json --------------------------------------------------------------------
my $j = hl_json(GET '/hotlimit-status?json') || {};
my @top = @{ $j->{top_refused} || [] };
ok t_cmp($top[0] ? $top[0]{client} : '', '203.0.113.5', '?json top_refused: the flooding address first');
ok t_cmp($top[0] ? $top[0]{refusals} : 0, 147, '... with its 147 refusals now');
ok t_cmp($top[0] ? $top[0]{rule} : '', $ip_rule, '... refused by the per-address line (FILE:LINE)');
ok t_cmp($top[1] ? "$top[1]{client} $top[1]{refusals}" : '', '198.51.100.7 2',
         '... the bystander second, with its 2');
my %route = map { ($_->{rule} // '') => $_ } @{ $j->{routes} || [] };
my ($ipr, $acr) = ($route{$ip_rule}, $route{$acct_rule});
my $ifr = $route{$if_rule};
ok t_cmp($ifr ? "$ifr->{route} $ifr->{refused_by_rule}" : "no route with rule $if_rule", qr{If#[0-9a-f]+ 1$},
         '?json: the <If> quota labelled by its FILE:LINE, with its 1 refusal');
ok t_cmp($ipr ? $ipr->{refused_by_rule} : -1, 149, '?json: the per-address line refused 149 itself');
ok t_cmp($acr ? $acr->{refused_by_rule} : -1, 0, '?json: the account line refused none');
ok t_cmp($acr ? "$acr->{admitted}/$acr->{rejected}/$acr->{refused_by_other}" : '', '6/0/149',
         '... while it met 6 admitted and 149 requests another rule refused (not its rejections)');
my @internal = grep { $_->{key} =~ /(?:^|\d)(?:rej|ban)\|/ }
               @{ $j->{top_keys} || [] }, @{ $j->{limited_keys} || [] };
ok t_cmp(scalar @internal, 0, '?json: no rej| or ban| counter among top_keys and limited_keys');
ok t_cmp(($j->{summary}{refusals_per_s} // -1) >= 0 && ($j->{summary}{bans_active} // -1) == 0 ? 1 : 0, 1,
         '?json summary: refusals_per_s and bans_active 0');
ok t_cmp(($j->{counters_started_ms} // 0) > 1e12 ? 1 : 0, 1, '?json: counters_started_ms');

# --- HTML ---------------------------------------------------------------------
my $html = GET('/hotlimit-status')->content;
ok t_cmp($html, qr{<h2>Refused most \(now\)</h2><table id="refused">.*?<tr class="refused first"><td class="client key">203\.0\.113\.5</td>}s,
         'HTML: the flooding address is the first row of "Refused most (now)"');
ok t_cmp($html, qr{<tr class="refused first">.*?<td class="rule">\Q$ip_rule\E</td><td class="num">147</td>}s,
         '... with its rule and 147 refusals');
ok t_cmp($html, qr{<td class="rule">\Q$ip_rule\E</td><td class="limits">3/1m by=ip</td><td>HotLimitQuota</td><td class="num">6</td><td class="num refused">149</td>}s,
         'HTML routes: the per-address line (FILE:LINE) refused 149');
ok t_cmp($html, qr{<td class="rule">\Q$acct_rule\E</td><td class="limits">[^<]*</td><td>HotLimitQuota</td><td class="num">6</td><td class="num refused">0</td><td class="num">149</td>}s,
         'HTML routes: the account line refused 0, 149 by another rule');
ok t_cmp($html =~ m{<td class="key">[^<]*(?:rej|ban)\|} ? 1 : 0, 0, 'HTML: no rej| or ban| key listed');
ok t_cmp($html, qr{<p id="summary"><span id="rate"[^>]*>\d+\.\d refusals/s now</span> &middot; <span id="bans-active">0 active bans</span>},
         'HTML: the summary line at the top');
ok t_cmp(GET('/hotlimit-status?refresh=5')->content, qr{<meta http-equiv="refresh" content="5">},
         '?refresh=5: the page refreshes itself');

# --- ?metrics: a bounded top-N ------------------------------------------------
my $m = GET('/hotlimit-status?metrics')->content;
my @kr = $m =~ /^hotlimit_key_refusals\{key="([^"]*)",route="[^"]*"\} \d+$/mg;
ok t_cmp(@kr && @kr <= 10 && $kr[0] =~ /\|203\.0\.113\.5$/ ? 1 : 0, 1,
         "?metrics: hotlimit_key_refusals, at most 10, the flooder first (@kr[0..($#kr < 1 ? $#kr : 1)])");

# --- account lookup -----------------------------------------------------------
# "VICTIM" folds to the account "victim" (norm=lower), as the requests did.
$j = hl_json(GET '/hotlimit-status?json&lookup=VICTIM') || {};
my ($k) = grep { ($_->{rule} // '') eq $acct_rule } @{ $j->{lookup}{keys} || [] };
ok t_cmp($k ? $k->{windows}[0]{count} : -1, 3, 'lookup: the account line counted 3 requests of "Victim"');
my $lk = GET('/hotlimit-status?lookup=VICTIM')->content;
ok t_cmp($lk, qr{<table id="lookup">.*<td class="key">[^<]*\|p:[0-9a-f]{16}</td><td class="windows"><span class="count">3</span>}s,
         'lookup (HTML): the account key with its count');
my $res = POST '/hotlimit-status', content => [ reset => $k ? $k->{key} : 'none' ];
ok t_cmp($res->code, 200, 'the account key reset');
$j = hl_json(GET '/hotlimit-status?json&lookup=victim') || {};
($k) = grep { ($_->{rule} // '') eq $acct_rule } @{ $j->{lookup}{keys} || [] };
ok t_cmp($k ? $k->{windows}[0]{count} : -1, 0, '... and the lookup finds its counter cleared');
