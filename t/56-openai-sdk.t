# The official OpenAI Node SDK (npm package "openai", pinned in
# t/openai/package-lock.json and installed by the test command with npm
# ci) as a real client nobody here wrote: it talks to httpd, which limits
# /v1/chat/completions with mod_hotlimit and forwards with mod_proxy_http
# to a stub OpenAI-compatible upstream (t/openai/stub.js) started here on
# 127.0.0.1. Scenarios are run by t/openai/client.js.
#
# - The SDK's own retry on 429 waits as our Retry-After says, then
#   succeeds; the refused request never reached the upstream.
# - 20 concurrent completions on a 1,000-token budget with
#   reserve=max_tokens (cost=usage) never charge more than 1,000 in total:
#   each reserves its max_tokens 200 + its body's length / 4 at admission,
#   so 4 are answered (by a second stub that takes 1 s, so all 20 are in
#   flight at once), 16 refused, and each is settled to the 200 tokens its
#   answer reports: 800 charged, which the next request sees.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(sleep);
use HotLimitTable;
use HLOpenAI;

plan tests => 5 + 5, need hl_openai_needs();

my $logs = Apache::Test::vars('t_logs');
my $stub_log = "$logs/hl_openai_stub.log";
my $stub_port = hl_stub_start('hl_openai_stub');
# A second stub whose answers take 1 s, like a model generating.
my $slow_log = "$logs/hl_openai_slow.log";
my $slow_port = hl_stub_start('hl_openai_slow', 1000);

my $h = start_httpd(name => 'openai', conf => hl_proxy_conf($stub_port) . <<"CONF");
<Location /v1/chat/completions>
    HotLimitQuota 1/2s by=header:Authorization
    HotLimitErrorFormat json
</Location>
ProxyPass /budget/v1/ http://127.0.0.1:$slow_port/v1/
<Location /budget/v1/chat/completions>
    HotLimitQuota 1000/1m by=header:Authorization cost=usage reserve=max_tokens
    HotLimitErrorFormat json
</Location>
CONF

# Runs a client scenario against httpd's base path $base (the SDK's
# baseURL); returns its JSON answer (a hash).
sub client_at {
    my ($base, $scenario, @args) = @_;
    return hl_node_json('client.js', $scenario, "http://127.0.0.1:${\ $h->port}$base", @args);
}

sub client { client_at('/v1', @_) }

sub stub_requests {
    open my $fh, '<', $_[0] // $stub_log or return 0;
    my @l = <$fh>;
    return scalar @l;
}

# --- the SDK's retry on 429 ---------------------------------------------------------
my $r = client('retry');
ok t_cmp($r->{error} // '', '', 'the SDK got both completions, no error');
ok t_cmp($r->{second} // '', 'Hello from the stub.', '... the second after a 429 and a retry');
ok t_cmp($r->{status} // 0, 200, '... answered 200 in the end');
# 1/2s: the second request came within the first's window, so Retry-After
# was 2 (or 1, if a second had passed); the SDK slept that long.
ok t_cmp(($r->{waited_ms} // 0) >= 900 && ($r->{waited_ms} // 0) < 8000 ? 1 : 0, 1,
         "... after waiting as Retry-After said ($r->{waited_ms} ms)");
ok t_cmp(stub_requests(), 2, 'the refused request never reached the upstream: 2 requests');

# --- 20 concurrent completions on a 1,000-token budget, reserve=max_tokens ----
$r = client_at('/budget/v1', 'budget', 20, 'stub-200', 200);
ok t_cmp(join(' ', $r->{answered} // -1, $r->{refused} // -1, scalar @{ $r->{other} // [] }),
         '4 16 0', '20 at once, each reserving 200 + its length / 4 (about 20): 4 answered, 16 refused (429)');
ok t_cmp($r->{tokens} // -1, 800, '... the answers reported 800 tokens in total');
ok t_cmp(stub_requests($slow_log), 4, '... and only 4 reached the upstream');
# The module's own count: a request reserving 1 + its length / 4 is
# admitted with 1000 - 800 - that left (the settlements gave back the
# unused 20 of each reservation).
sleep 0.5;
my $body = '{"model":"stub-10","max_tokens":1,"messages":[]}';
my $res = $h->{ua}->post($h->url('/budget/v1/chat/completions'),
                         Authorization => 'Bearer sk-test-key',
                         'Content-Type' => 'application/json', Content => $body);
my ($left) = ($res->header('RateLimit') // '') =~ /;r=(\d+)/;
ok t_cmp($res->code, 200, 'a small request after them is admitted');
ok t_cmp($left // -1, 1000 - 800 - (1 + int(length($body) / 4)),
         '... with 1000 - 800 - its reservation left: 800 charged, never over 1,000');
