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
use JSON::PP ();
use POSIX ();
use Time::HiRes qw(sleep);
use HotLimitTable;

my $dir = "$FindBin::Bin/openai";
my $node = (grep { -x "$_/node" } split /:/, $ENV{PATH} // '')[0];
my $modules = `apxs -q LIBEXECDIR 2>/dev/null`;
chomp $modules;

plan tests => 5,
    need { 'node (Node.js) in PATH' => $node,
           'the openai SDK in t/openai/node_modules (npm ci, run by quickstart.sh test)'
               => -f "$dir/node_modules/openai/package.json",
           'mod_proxy_http' => -f "$modules/mod_proxy_http.so" };

my $logs = Apache::Test::vars('t_logs');
my $stub_log = "$logs/hl_openai_stub.log";
unlink $stub_log;
my $stub_port = HotLimitTable::free_port();
my $stub_pid = fork // die "fork: $!";
if (!$stub_pid) {
    open STDOUT, '>', "$logs/hl_openai_stub.out";
    exec "$node/node", "$dir/stub.js", $stub_port, $stub_log or POSIX::_exit(127);
}
END { kill 'TERM', $stub_pid if $stub_pid; }
HotLimitTable::wait_until(sub {
    IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $stub_port, Timeout => 1)
}, 10) or die "the stub upstream did not start";

my $h = start_httpd(name => 'openai', conf => <<"CONF");
<IfModule !proxy_module>
    LoadModule proxy_module $modules/mod_proxy.so
</IfModule>
<IfModule !proxy_http_module>
    LoadModule proxy_http_module $modules/mod_proxy_http.so
</IfModule>
ProxyPass /v1/ http://127.0.0.1:$stub_port/v1/
<Location /v1/chat/completions>
    HotLimitQuota 1/2s by=header:Authorization
    HotLimitErrorFormat json
</Location>
CONF

# Runs a client scenario; returns its JSON answer (a hash).
sub client {
    my ($scenario, @args) = @_;
    my $out = `cd $dir && timeout 60 $node/node client.js $scenario http://127.0.0.1:${\ $h->port}/v1 @args 2>&1`;
    t_debug("client $scenario: $out");
    my ($line) = grep { /^\{/ } split /\n/, $out;
    return eval { JSON::PP::decode_json($line // '') } // { error => $out };
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
