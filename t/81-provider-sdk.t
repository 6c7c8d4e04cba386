# The official SDKs meet provider-shaped 429s (issue 26 item 3): the
# OpenAI Node SDK and the Anthropic Node SDK (npm "openai" and
# "@anthropic-ai/sdk", pinned in t/openai/package-lock.json and installed
# by the test command with npm ci) talk to httpd, which limits with
# mod_hotlimit and forwards to the stub upstream (t/openai/stub.js). Scenarios are run by t/openai/client.js.
#
# - HotLimitErrorFormat openai: the SDK's RateLimitError shows our message
#   (which limit, how long to wait in words), type and code, not "429
#   status code (no body)".
# - HotLimitHeaders openai: the SDK's retry waits as retry-after-ms says
#   (under 0.7 s on a 1/700ms quota), not Retry-After's whole second;
#   measured at the server, between the 429 and the retry.
# - HotLimitErrorFormat anthropic: the Anthropic SDK's error is a
#   RateLimitError whose body is a rate_limit_error with our message, with
#   the anthropic-ratelimit-* headers.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLOpenAI;

plan tests => 14, need hl_openai_needs(),
    { 'the Anthropic SDK in t/openai/node_modules (npm ci)'
          => -f hl_openai_dir() . '/node_modules/@anthropic-ai/sdk/package.json' };

my $stub_port = hl_stub_start('hl_shapes_stub');
my $h = start_httpd(name => 'provider-sdk', conf => hl_proxy_conf($stub_port) . <<"CONF");
ProxyPass /msg/v1/ http://127.0.0.1:$stub_port/v1/
ProxyPass /retry/v1/ http://127.0.0.1:$stub_port/v1/
ProxyPass /anth/v1/ http://127.0.0.1:$stub_port/v1/
LogFormat "%{usec}t %>s %U" hlusec
CustomLog "usec.log" hlusec
<Location /msg/v1/chat/completions>
    HotLimitQuota 1/1m by=header:Authorization
    HotLimitErrorFormat openai
</Location>
<Location /retry/v1/chat/completions>
    HotLimitQuota 1/700ms by=header:Authorization
    HotLimitErrorFormat openai
    HotLimitHeaders openai
</Location>
<Location /anth/v1/messages>
    HotLimitQuota 1/1m by=header:Authorization
    HotLimitErrorFormat anthropic
    HotLimitHeaders anthropic
</Location>
CONF

sub sdk {
    my ($scenario, $base) = @_;
    return hl_node_json('client.js', $scenario, "http://127.0.0.1:${\ $h->port}$base");
}

# --- the OpenAI SDK shows our message -----------------------------------------------
$h->{ua}->post($h->url('/msg/v1/chat/completions'), Authorization => 'Bearer sk-test-key',
               'Content-Type' => 'application/json', Content => '{}');
my $r = sdk('openai-error', '/msg/v1');
ok t_cmp($r->{class} // '', 'RateLimitError', 'OpenAI SDK: a RateLimitError');
ok t_cmp($r->{message} // '',
         qr/^429 Rate limit reached for \/msg\/v1\/chat\/completions on requests \(1\/1m\)\. Please try again in (about )?\d+ (seconds?|minute)\.$/,
         "... whose message is ours, in words ($r->{message})");
ok t_cmp(join(' ', $r->{type} // '-', $r->{code} // '-'), 'requests rate_limit_exceeded',
         '... with type requests and code rate_limit_exceeded');

# --- the OpenAI SDK's retry waits as retry-after-ms says ---------------------------
my $off = -s $h->dir . '/usec.log' || 0;
$r = sdk('openai-retry', '/retry/v1');
ok t_cmp($r->{error} // '', '', 'OpenAI SDK: both completions answered');
ok t_cmp($r->{second} // '', 'Hello from the stub.', '... the second after a 429 and a retry');
my @hits = do {
    open my $fh, '<', $h->dir . '/usec.log' or die $!;
    seek $fh, $off, 0;
    sort { $a->[0] <=> $b->[0] } map { [split ' '] } grep { m{/retry/} } <$fh>;
};
ok t_cmp(join(' ', map { $_->[1] } @hits), '200 429 200', '... the server saw 200, 429, 200');
my $gap_ms = @hits == 3 ? ($hits[2][0] - $hits[1][0]) / 1000 : -1;
# Retry-After's whole second would put it at 1,000 ms or later; the window
# of 700 ms leaves a loaded machine room to send the second call in time.
ok t_cmp($gap_ms > 50 && $gap_ms < 950 ? 1 : 0, 1,
         "... the retry came ${gap_ms} ms after the 429: retry-after-ms (< 700), not Retry-After's 1 s");

# The 429 itself carries retry-after-ms below Retry-After's second.
$h->{ua}->post($h->url('/retry/v1/chat/completions'), Authorization => 'Bearer sk-raw',
               'Content-Type' => 'application/json', Content => '{}');
my $res = $h->{ua}->post($h->url('/retry/v1/chat/completions'), Authorization => 'Bearer sk-raw',
                         'Content-Type' => 'application/json', Content => '{}');
my $ms = $res->header('retry-after-ms') // '';
ok t_cmp($res->code == 429 && $ms =~ /^\d+$/ && $ms >= 1 && $ms <= 700 ? 1 : 0, 1,
         "a raw 429: retry-after-ms $ms (1..700) beside Retry-After: " . ($res->header('Retry-After') // '-'));

# --- the Anthropic SDK reads a rate_limit_error ------------------------------------
# (The Anthropic SDK 1.16.0 sends its apiKey as "Authorization: Bearer".)
$h->{ua}->post($h->url('/anth/v1/messages'), Authorization => 'Bearer sk-ant-key',
               'Content-Type' => 'application/json', Content => '{}');
$r = sdk('anthropic-error', '/anth');
ok t_cmp($r->{class} // '', 'RateLimitError', 'Anthropic SDK: a RateLimitError');
ok t_cmp($r->{status} // 0, 429, '... status 429');
ok t_cmp(($r->{body} // {})->{type} // '', 'error', '... body type error');
ok t_cmp((($r->{body} // {})->{error} // {})->{type} // '', 'rate_limit_error',
         '... error.type rate_limit_error');
ok t_cmp((($r->{body} // {})->{error} // {})->{message} // '',
         qr/^Rate limit reached for \/anth\/v1\/messages on requests \(1\/1m\)\. Please try again in (about )?\d+ (seconds?|minute)\.$/,
         '... error.message is ours');
ok t_cmp(($r->{headers} // {})->{'anthropic-ratelimit-requests-limit'} // '', '1',
         '... and the anthropic-ratelimit-requests-limit header says 1');
