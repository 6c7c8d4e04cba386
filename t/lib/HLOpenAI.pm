package HLOpenAI;
# The OpenAI SDK tests' shared parts (t/56-openai-sdk.t,
# t/66-concurrency-sdk.t): what they need, the stub upstream
# (t/openai/stub.js) started on a free port and stopped at the end, and
# the mod_proxy_http lines that forward /v1/ to it.
use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use FindBin ();
use IO::Socket::INET ();
use POSIX ();
use Apache::Test ();
use Apache::TestUtil ();
use JSON::PP ();
use HotLimitTable ();

our @EXPORT = qw(hl_openai_dir hl_node hl_openai_needs hl_stub_start hl_proxy_conf
                 hl_node_json);

my @stubs;

# Returns t/openai.
sub hl_openai_dir { "$FindBin::Bin/openai" }

# Returns the directory holding node, or undef.
sub hl_node { (grep { -x "$_/node" } split /:/, $ENV{PATH} // '')[0] }

sub _modules {
    my $m = `apxs -q LIBEXECDIR 2>/dev/null`;
    chomp $m;
    return $m;
}

# Returns the requirements for Apache::Test's plan ... need { ... }.
sub hl_openai_needs {
    my $dir = hl_openai_dir();
    return { 'node (Node.js) in PATH' => hl_node(),
             'the openai SDK in t/openai/node_modules (npm ci, run by quickstart.sh test)'
                 => -f "$dir/node_modules/openai/package.json",
             'mod_proxy_http' => -f _modules() . '/mod_proxy_http.so' };
}

# Starts the stub upstream (STUB_DELAY_MS $delay, default 0), logging its
# requests to t/logs/$name.log; returns its port once it answers (dies
# after 10 s). It is stopped when the test ends.
sub hl_stub_start {
    my ($name, $delay) = @_;
    my $logs = Apache::Test::vars('t_logs');
    my $port = HotLimitTable::free_port();
    unlink "$logs/$name.log";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        $ENV{STUB_DELAY_MS} = $delay // 0;
        open STDOUT, '>', "$logs/$name.out";
        exec hl_node() . '/node', hl_openai_dir() . '/stub.js', $port, "$logs/$name.log"
            or POSIX::_exit(127);
    }
    push @stubs, $pid;
    HotLimitTable::wait_until(sub {
        IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 1)
    }, 10) or die "the stub upstream did not start";
    return $port;
}

# Returns the configuration lines that load mod_proxy_http (unless loaded)
# and forward /v1/ to the stub on $port.
sub hl_proxy_conf {
    my $port = shift;
    my $modules = _modules();
    return <<"CONF";
<IfModule !proxy_module>
    LoadModule proxy_module $modules/mod_proxy.so
</IfModule>
<IfModule !proxy_http_module>
    LoadModule proxy_http_module $modules/mod_proxy_http.so
</IfModule>
ProxyPass /v1/ http://127.0.0.1:$port/v1/
CONF
}

# Runs t/openai/$script with @args under node (60 s at most); returns the
# first JSON line it printed, decoded (a hash), or { error => its output }.
sub hl_node_json {
    my ($script, @args) = @_;
    my $dir = hl_openai_dir();
    my $out = `cd $dir && timeout 60 ${\ hl_node()}/node $script @args 2>&1`;
    Apache::TestUtil::t_debug("$script @args: $out");
    my ($line) = grep { /^\{/ } split /\n/, $out;
    return eval { JSON::PP::decode_json($line // '') } // { error => $out };
}

END { kill 'TERM', @stubs if @stubs; }

1;
