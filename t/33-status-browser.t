# The status page as a person sees it, in a real browser: Debian's
# Chromium, headless, loads /hotlimit-status and the DOM it dumps after
# scripts ran must show the configured routes with their limits (one never
# requested too), the charts, and the key just spent with its reset
# button; then the button is pressed in the browser (t/support/cdp_reset.py
# drives Chromium over its DevTools pipe) and the key must be reset,
# through the same-origin check, and the browser back on the page.
# Under attack (issue 21): during a flood from one address behind a proxy,
# the browser finds that address first in "Refused most (now)" with the
# quota line (FILE:LINE) that refuses it, and that line's row with the
# refusals; it looks an account up by name in the page's box and resets it
# with the page's own button (t/support/cdp_lookup.py). Screenshots are
# kept in t/logs (status-attack.png, status-lookup.png).
# Under the issue-27 attack, on a private httpd whose store is Redis: a
# flood that earns a ban, credential stuffing over many accounts (param:)
# with one targeted, then Redis stopped; from the page alone the browser
# finds the targeted account by its NAME (HotLimitStatusNames), "store
# down" in the summary line and a chart with a time axis
# and the ban with its HotLimitBan FILE:LINE (status-outage.png).
# Skipped, saying why, only when Chromium is not installed or cannot run.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use File::Path qw(make_path remove_tree);
use HLTest;
use HotLimitTable;
use HLRedis;

my ($chromium) = grep { -x } '/usr/bin/chromium', '/usr/bin/chromium-browser';
my $helper = "$FindBin::Bin/support/cdp_reset.py";
my $logs = hl_logs();
my $home = "$logs/chromium-home";
my @flags = qw(--headless --no-sandbox --disable-gpu --disable-quic
               --no-first-run --disable-background-networking
               --disable-component-update --disable-sync --no-proxy-server);
my $runs = 0;

# Returns a fresh, empty profile directory under t/logs.
sub profile {
    my $dir = "$logs/chromium-profile-" . ++$runs;
    remove_tree($dir);
    make_path($dir, $home);
    return $dir;
}

# Returns what Chromium printed for `chromium FLAGS ARGS`; its messages on
# standard error (no D-Bus here, ...) go to t/logs/chromium.log.
sub chromium {
    my @args = @_;
    local $ENV{HOME} = $home;
    my $profile = profile();
    open(my $saved, '>&', \*STDERR) or die "dup STDERR: $!";
    open(STDERR, '>>', "$logs/chromium.log") or die "chromium.log: $!";
    my $ok = open(my $fh, '-|', 'timeout', '90', $chromium, @flags,
                  "--user-data-dir=$profile", @args);
    open(STDERR, '>&', $saved) or die "restore STDERR: $!";
    return '' unless $ok;
    local $/;
    my $out = <$fh> // '';
    close $fh;
    return $out;
}

# Chromium must run at all, or the test says why it is skipped.
my $runs_ok = $chromium && chromium('--dump-dom',
    'data:text/html,<p id=x></p><script>x.textContent="script ran"</script>')
    =~ /script ran/;

plan tests => 11 + 10 + 9,
    need { 'chromium (apt-get install chromium)' => $chromium,
           'chromium that starts headless and runs a script' => $runs_ok };

my ($port) = Apache::TestRequest::hostport() =~ /:(\d+)$/;
my $url = "http://127.0.0.1:$port/hotlimit-status";
my $key = '/browse|127.0.0.1';

# The key spends its first window (1/10m): at its limit now.
my @codes = map { GET('/browse/')->code } 1 .. 2;
ok t_cmp("@codes", '200 429', '/browse: 1 admitted, 1 rejected');

# --- what a person sees -----------------------------------------------------
my $dom = chromium('--dump-dom', $url);
t_debug(substr($dom, 0, 3000));
ok t_cmp($dom, qr{<h1>mod_hotlimit status</h1>}, 'the page loads in Chromium');
ok t_cmp($dom, qr{<td class="name">/browse</td><td class="rule">[^<]+\.conf:\d+</td><td class="limits">1/10m 20/1h by=ip</td><td>HotLimitQuota</td><td class="num">1</td><td class="num refused">1</td>},
         '/browse with its configured limits, 1 admitted and 1 rejected');
ok t_cmp($dom, qr{<td class="name">/browse-idle</td><td class="rule">[^<]+\.conf:\d+</td><td class="limits">7/1m by=ip</td><td>HotLimitQuota</td><td class="num">0</td><td class="num refused">0</td>},
         '/browse-idle, never requested, listed with its limits from the start');
my ($row) = $dom =~ m{(<tr class="route"><td class="name">/browse</td>.*?</tr>)}s;
ok t_cmp($row // '', qr{<svg class="chart"[^>]*>.*<rect [^>]*fill="#d22"}s,
         "/browse's chart has a bar of rejected requests");
my ($limited) = $dom =~ m{(<tr class="limited"><td class="key">\Q$key\E</td>.*?</tr>)}s;
ok t_cmp($limited // '', qr{<td>directive</td><td>1</td><td class="num">1</td><td class="left">(?:9|10) min(?: \d+ s)?</td>.*<form class="reset"[^>]*>.*<button type="submit">reset</button>}s,
         "$key at its limit in window 1, about 10 min left, with a reset button");
ok t_cmp($dom, qr{<p id="bans">No client is banned now.</p>}, 'bans shown: none now');

# --- the reset button, pressed in the browser ---------------------------------
my $off = hl_offset(hl_error_log());
my $profile = profile();
my $json = do {
    local $ENV{HOME} = $home;
    `timeout 120 python3 $helper $chromium $url '$key' $profile`;
};
my $r = eval { JSON::PP::decode_json($json) } || {};
t_debug("helper: " . substr($json // '', 0, 500));
ok t_cmp($r->{clicked} ? 1 : 0, 1, 'the reset button of the key was clicked');
ok t_cmp(($r->{url_after} // '') . (($r->{after} // '') =~ m{<tr class="limited"><td class="key">\Q$key\E</td>} ? ' still listed' : ''),
         $url, 'back on the status page (303), the key no longer at its limit');
# The helper returned once the page behind the 303 had loaded, so the line
# is normally there already; the deadline is generous for a loaded machine.
my @l = hl_wait_lines(hl_error_log(), $off, sub { grep { /HL0030[01]/ } @_ }, 30);
ok t_cmp(join('', grep { /HL0030[01]/ } @l) . ((grep { /HL00301/ } @l) ? ' (and a refusal)' : ''),
         qr{HL00300: counters of key '/browse\|127\.0\.0\.1' reset by 127\.0\.0\.1 \(2 slots\), referer: \Q$url\E(?!.*refusal)}s,
         "the browser's POST passed the same-origin check and reset both windows");
ok t_cmp(GET('/browse/')->code, 200, '/browse admitted again after the reset');

# --- under attack: who is hurting me ------------------------------------------
Apache::TestRequest::module('hl_attackb');
my ($aport) = Apache::TestRequest::hostport() =~ /:(\d+)$/;
my $aurl = "http://127.0.0.1:$aport/hotlimit-status";
my $conf = Apache::Test::vars('t_conf') . '/extra.conf';
my ($ip_line, $in) = (undef, 0);
open my $cf, '<', $conf or die "$conf: $!";
while (<$cf>) {
    $in = 1 if m{<Location /atkb/login>};
    if ($in && /HotLimitQuota 3\/1m$/) { $ip_line = $.; last }
}
close $cf;
my $ip_rule = "$conf:" . ($ip_line // 0);

GET('/atkb/login?log=bystander', 'X-Forwarded-For' => '198.51.100.9') for 1 .. 5;
my %c;
$c{ GET('/atkb/login?log=Victim', 'X-Forwarded-For' => '203.0.113.66')->code }++ for 1 .. 120;
ok t_cmp("200:" . ($c{200} // 0) . " 429:" . ($c{429} // 0), '200:3 429:117',
         'a flood from 203.0.113.66: 3 admitted, 117 refused');

my $shot = "$logs/status-attack.png";
unlink $shot;
chromium("--screenshot=$shot", '--window-size=1400,1800', $aurl);
ok t_cmp((-s $shot // 0) > 10_000 ? 1 : 0, 1, "a screenshot of the page under attack: $shot");
$dom = chromium('--dump-dom', $aurl);
t_debug(substr($dom, 0, 3000));
my ($first) = $dom =~ m{<table id="refused">.*?(<tr class="refused first">.*?</tr>)}s;
ok t_cmp($first // '', qr{^<tr class="refused first"><td class="client key">203\.0\.113\.66</td>},
         'Chromium: the flooding address is the first row of "Refused most (now)"');
ok t_cmp($first // '', qr{<td class="rule">\Q$ip_rule\E</td><td class="num">117</td>},
         '... refused by the per-address line (FILE:LINE), 117 times now');
ok t_cmp($dom, qr{<td class="rule">\Q$ip_rule\E</td><td class="limits">3/1m by=ip</td><td>HotLimitQuota</td><td class="num">6</td><td class="num refused">119</td>},
         "Chromium: the refusing rule's row with its 119 refusals");
ok t_cmp($dom =~ m{<td class="key">[^<]*(?:rej|ban)\|} ? 1 : 0, 0, 'Chromium: no internal rej|/ban| row');

my $lshot = "$logs/status-lookup.png";
unlink $lshot;
my $lj = do {
    local $ENV{HOME} = $home;
    my $lprofile = profile();
    `timeout 120 python3 $FindBin::Bin/support/cdp_lookup.py $chromium $aurl VICTIM $lprofile $lshot`;
};
my $l = eval { JSON::PP::decode_json($lj) } || {};
ok t_cmp($l->{found} // '', qr{<table id="lookup">.*<td class="key">[^<]*/atkb/login#2\|p:[0-9a-f]{16}</td><td class="windows"><span class="count">3</span>}s,
         'Chromium: the account "VICTIM" looked up in the box: its key, 3 requests');
ok t_cmp((-s $lshot // 0) > 10_000 ? 1 : 0, 1, "a screenshot of the lookup: $lshot");
ok t_cmp(($l->{clicked} ? 'clicked ' : '') . ($l->{url_after} // ''), "clicked $aurl",
         "Chromium: the lookup's reset button pressed, back on the page");
my $after = hl_json(GET '/hotlimit-status?json&lookup=victim') || {};
my ($ak) = grep { $_->{key} =~ m{/atkb/login#2\|} } @{ $after->{lookup}{keys} || [] };
ok t_cmp($ak ? $ak->{windows}[0]{count} : -1, 0, "the account's counter is reset");
Apache::TestRequest::module('default');

# --- issue 27: who, which account, is the store healthy, since when -----------
# A private httpd (HotLimitStore is the main server's) on a real Redis.
if (!HLRedis::available()) {
    skip('redis-server (apt-get install redis-server) is not installed', 0) for 1 .. 9;
}
else {
    my $redis = HLRedis->new('browser-outage')->start;
    my $rport = $redis->port;
    my $h = start_httpd(name => 'browser-outage', conf => <<"CONF");
HotLimitStore redis://127.0.0.1:$rport
HotLimitStoreTimeout 50
HotLimitStoreFailure local
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
HotLimitBan 20/1m 10m
<Location /flood>
    HotLimitQuota 5/1m
</Location>
<Location /login>
    HotLimitQuota 3/1m by=param:user
</Location>
CONF
    my $ourl = $h->url('/hotlimit-status');
    # The flood: one address, 60 requests: 5 admitted, then refused and banned.
    my %fc;
    $fc{ $h->get('/flood', 'X-Forwarded-For' => '203.0.113.77')->code }++ for 1 .. 60;
    ok t_cmp("200:" . ($fc{200} // 0), '200:5', 'a flood from 203.0.113.77: 5 admitted, the rest refused');
    # Credential stuffing from 12 addresses over 40 accounts, one targeted.
    my %tc;
    for my $i (1 .. 40) {
        $h->get("/login?user=user$i", 'X-Forwarded-For' => '198.51.100.' . (1 + $i % 12));
    }
    $tc{ $h->get('/login?user=Target.Admin%40example.org',
                 'X-Forwarded-For' => '198.51.100.' . (1 + $_ % 12))->code }++ for 1 .. 12;
    ok t_cmp("200:" . ($tc{200} // 0) . " 429:" . ($tc{429} // 0), '200:3 429:9',
             'credential stuffing: the targeted account admitted 3 times, then refused');
    # Redis stops; the next requests find it down (the breaker opens).
    $redis->stop;
    $h->get('/flood', 'X-Forwarded-For' => '192.0.2.1') for 1 .. 3;
    ok t_cmp($h->metrics, qr/^hotlimit_store_up 0$/m, 'Redis stopped: the module says the store is down');

    my $oshot = "$logs/status-outage.png";
    unlink $oshot;
    chromium("--screenshot=$oshot", '--window-size=1400,2200', $ourl);
    ok t_cmp((-s $oshot // 0) > 10_000 ? 1 : 0, 1, "a screenshot of the page in the outage: $oshot");
    my $odom = chromium('--dump-dom', $ourl);
    t_debug(substr($odom, 0, 4000));
    my ($summary) = $odom =~ m{(<p id="summary">.*?</p>)}s;
    ok t_cmp($summary // '', qr{<span id="store-health" class="warn"><b>store down</b>},
             'Chromium: "store down" in the summary line, in red');
    my ($trow) = $odom =~ m{(<tr class="refused[^"]*"><td class="client key">[^<]*<span class="name"[^>]*>[^<]*Target\.Admin\@example\.org[^<]*</span>.*?</tr>)}s;
    ok t_cmp($trow // '', qr{<td class="client key">p:[0-9a-f]{16} <span class="name"}s,
             'Chromium: the targeted account named in "Refused most (now)" beside its hash');
    ok t_cmp($trow // '', qr{<td class="num">9</td>}, '... with its 9 refusals now');
    my ($frow) = $odom =~ m{(<tr class="route"><td class="name">/flood</td>.*?</tr>)}s;
    ok t_cmp($frow // '', qr{<svg class="chart".*<g class="time-axis">.*>5 min ago</text>.*>now</text></g>.*</svg>}s,
             "Chromium: /flood's chart has a time axis, 5 min ago to now");
    my ($brow) = $odom =~ m{(<tr class="ban"><td class="client key">203\.0\.113\.77</td>.*?</tr>)}s;
    ok t_cmp($brow // '', qr{<td class="line">HotLimitBan [^<]*\.conf:\d+}s,
             'Chromium: the flooder\'s ban names its HotLimitBan FILE:LINE');
    $h->stop;
}
