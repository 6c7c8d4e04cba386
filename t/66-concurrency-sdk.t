# HotLimitConcurrency through the official OpenAI Node SDK (t/openai, as
# t/56-openai-sdk.t): httpd limits /v1/chat/completions to 2 streams per
# API key and forwards with mod_proxy_http to the stub upstream
# (t/openai/stub.js, its events 600 ms apart: a stream lasts 3 s). The SDK holds two streams;
# a third gets 429 with Retry-After: 1; aborting one mid-stream gives its
# slot back, so the next stream is admitted while the other still runs
# (t/openai/conc.js).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLOpenAI;

plan tests => 8, need hl_openai_needs();

my $stub_port = hl_stub_start('hl_conc_stub', 600);
my $h = start_httpd(name => 'conc-sdk', conf => hl_proxy_conf($stub_port) . <<'CONF');
<Location /v1/chat/completions>
    HotLimitConcurrency 2 by=header:Authorization
    HotLimitErrorFormat json
</Location>
CONF

my $r = hl_node_json('conc.js', "http://127.0.0.1:${\ $h->port}/v1");

ok t_cmp($r->{error} // '', '', 'the SDK ran the scenario without an error');
ok t_cmp($r->{first_word} // '', 'Hello', 'two streams of one key run at once');
ok t_cmp($r->{third}{status} // 0, 429, 'a third stream of the key: 429');
ok t_cmp($r->{third}{retry_after} // '', '1', '... with Retry-After: 1');
ok t_cmp($r->{fourth}{status} // 0, 200,
         'after the client aborted a stream mid-way, the next stream is admitted');
ok t_cmp($r->{fourth}{before_second_ended} ? 1 : 0, 1,
         'admitted while the other stream still runs ('
         . ($r->{fourth}{admitted_ms} // '?') . ' ms after the abort)');
ok t_cmp($r->{fourth}{text} // '', 'Hello from the stub.', '... and streams to its end');
ok t_cmp($r->{second} // '', 'Hello from the stub.',
         'the other stream ran to its end meanwhile');
