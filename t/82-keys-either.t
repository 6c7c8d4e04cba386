# by=A|B: the first of A, B the request carries (issue 26 item 4).
#
# - HotLimitQuota 1/1m by=header:Authorization|header:x-api-key: clients
#   that send their key as x-api-key (Anthropic style) get one budget per
#   key from one address (200 200 200, where by=header:Authorization gave
#   200 200 429: they all fell back to the address); Authorization still
#   keys; with both, Authorization (the first) decides; with neither, the
#   address.
# - The Anthropic SDK (t/openai, pinned): three keys, as apiKey (1.16.0
#   sends it as "Authorization: Bearer") and as an x-api-key header, one
#   budget each.
# - The same forms in HotLimitConcurrency's by= and the table's "by"
#   (ip last in A|B), and what a configtest refuses, naming the bad part.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLOpenAI;

plan tests => 20;

my $h = start_httpd(name => 'keys-either', table => {
    routes => {
        '/t/either' => { max => 1, window => '1m',
                         by => 'header:X-Key|cookie:sid|ip' },
    } }, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
<Location /gw>
    HotLimitQuota 1/1m by=header:Authorization|header:x-api-key
</Location>
<Location /conc>
    HotLimitConcurrency 4 by=header:Authorization|header:x-api-key
</Location>
CONF

# --- raw clients -------------------------------------------------------------
my @s = map { $h->get('/gw/v1/messages', 'x-api-key' => "sk-ant-$_")->code } 1 .. 3;
ok t_cmp("@s", '200 200 200', 'three x-api-key keys from one address: one budget each');
ok t_cmp($h->get('/gw/v1/messages', 'x-api-key' => 'sk-ant-1')->code, 429,
         'the first x-api-key key again: its own budget is spent');
ok t_cmp($h->get('/gw/v1/messages', 'x-api-key' => ' SK-ANT-2 ')->code, 429,
         'norm=lower folds an x-api-key value as a lone header key would');
ok t_cmp($h->codes('/gw/v1/chat', 2, Authorization => 'Bearer sk-a'), '200 429',
         'Authorization still keys: 1 admitted, then refused');
ok t_cmp($h->get('/gw/v1/chat', Authorization => 'Bearer sk-b')->code, 200,
         'another Authorization key: its own budget');
ok t_cmp($h->get('/gw/v1/chat', Authorization => 'Bearer sk-a',
                 'x-api-key' => 'sk-ant-fresh')->code, 429,
         'both headers: the first alternative (Authorization) decides');
ok t_cmp($h->get('/gw/v1/chat', Authorization => 'Bearer sk-c',
                 'x-api-key' => 'sk-ant-1')->code, 200,
         'both headers: a spent x-api-key does not refuse a fresh Authorization');
ok t_cmp($h->codes('/gw/v1/none', 2), '200 429',
         'neither header: the client address keys (1 admitted, then refused)');

# --- the table's "by" --------------------------------------------------------
ok t_cmp($h->codes('/t/either', 2, 'X-Key' => 'k1'), '200 429',
         'table by=header:X-Key|cookie:sid|ip: the header keys');
ok t_cmp($h->get('/t/either', Cookie => 'sid=s1')->code, 200,
         'table: the cookie keys when the header is absent');
ok t_cmp($h->get('/t/either', 'X-Key' => 'k2', Cookie => 'sid=s1')->code, 200,
         'table: the header first, even with a spent cookie');
ok t_cmp($h->codes('/t/either', 2), '200 429', 'table: the address last');

# --- HotLimitConcurrency by=A|B: taken and given back per key ----------------
ok t_cmp($h->codes('/conc/x', 3, 'x-api-key' => 'sk-c1'), '200 200 200',
         'HotLimitConcurrency by=A|B admits requests one after the other');

# --- the Anthropic SDK --------------------------------------------------------
SKIP: {
    my $needs = hl_openai_needs();
    my @missing = grep { !$needs->{$_} } sort keys %$needs;
    push @missing, 'the Anthropic SDK'
        unless -f hl_openai_dir() . '/node_modules/@anthropic-ai/sdk/package.json';
    # Apache::Test's skip is Test.pm's: one "ok # skip" per call, and it
    # does not leave the block.
    if (@missing) { skip("missing: @missing", 0) for 1 .. 4; last SKIP }
    my $base = "http://127.0.0.1:${\ $h->port}/gw/sdk";
    my $r = hl_node_json('client.js', 'anthropic-keys', $base, 'apikey',
                         'sk-sdk-1,sk-sdk-2,sk-sdk-3,sk-sdk-1');
    my @st = map { $_ == 429 ? 429 : 'ok' } @{ $r->{statuses} || [] };
    ok t_cmp("@st", 'ok ok ok 429', 'SDK apiKey: three keys one budget each, the first again refused');
    ok t_cmp($r->{sent}{authorization} // '', 'Bearer sk-sdk-1',
             'SDK 1.16.0 sends its apiKey as Authorization: Bearer');
    $r = hl_node_json('client.js', 'anthropic-keys', $base, 'xapikey',
                      'sk-x-1,sk-x-2,sk-x-3,sk-x-1');
    @st = map { $_ == 429 ? 429 : 'ok' } @{ $r->{statuses} || [] };
    ok t_cmp("@st", 'ok ok ok 429', 'SDK x-api-key header: three keys one budget each');
    ok t_cmp($r->{sent}{'x-api-key'} // '', 'sk-x-1', 'the SDK sent x-api-key');
}

# --- configtest: what is refused, naming the bad part --------------------------
sub configtest {
    my ($line) = @_;
    my $c = start_httpd(name => 'keys-either-bad', start => 0, conf => <<"CONF");
<Location /x>
    $line
</Location>
CONF
    my $httpd = Apache::Test::vars('httpd');
    return scalar `$httpd -t -f '$c->{conf_file}' 2>&1`;
}

my $out = configtest('HotLimitQuota 1/1m by=ip|header:X-Key');
ok t_cmp($out, qr/'ip' is always present.*'header:X-Key'/s,
         'configtest: a part after ip in A|B is refused, named');
$out = configtest('HotLimitQuota 1/1m by=ip+header:a+header:b+header:c+header:d');
ok t_cmp($out, qr/more than 4 parts/, 'configtest: at most 4 parts');
$out = configtest('HotLimitConcurrency 2 by=header:a|header:a');
ok t_cmp($out, qr/'header:a' named twice/, 'configtest (HotLimitConcurrency): a part twice');
