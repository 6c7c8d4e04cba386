# The official OpenAI Node SDK (npm package "openai", pinned in
# t/openai/package-lock.json and installed by the test command with npm
# ci) as a real client nobody here wrote: it talks to httpd, which limits
# /v1/chat/completions with mod_hotlimit and forwards with mod_proxy_http
# to a stub OpenAI-compatible upstream (t/openai/stub.js) started here on
# 127.0.0.1. Scenarios are run by t/openai/client.js.
#
# - The SDK's own retry on 429 waits as our Retry-After says, then
#   succeeds; the refused request never reached the upstream.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(sleep);
use HotLimitTable;
use HLOpenAI;

plan tests => 5, need hl_openai_needs();

my $stub_log = Apache::Test::vars('t_logs') . '/hl_openai_stub.log';
my $stub_port = hl_stub_start('hl_openai_stub');

my $h = start_httpd(name => 'openai', conf => hl_proxy_conf($stub_port) . <<"CONF");
<Location /v1/chat/completions>
    HotLimitQuota 1/2s by=header:Authorization
    HotLimitErrorFormat json
</Location>
CONF

# Runs a client scenario; returns its JSON answer (a hash).
sub client {
    my ($scenario, @args) = @_;
    return hl_node_json('client.js', $scenario, "http://127.0.0.1:${\ $h->port}/v1", @args);
}

sub stub_requests {
    open my $fh, '<', $stub_log or return 0;
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
