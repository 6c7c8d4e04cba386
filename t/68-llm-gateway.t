# The LLM gateway recipe (conf-examples/llm-gateway.conf) in front of the
# stub OpenAI-compatible upstream, driven by the official OpenAI Node SDK:
# answers pass, every policy is announced (the key's token windows and the
# address fuse), 20 completions sent at once stay within the token budget
# and meet the key's concurrency limit, and a reservation over the budget
# gets a JSON 429. Anthropic-style clients (x-api-key, no Authorization)
# get one budget per key, not one per address.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLOpenAI;

plan tests => 9, need hl_openai_needs();

my $logs = Apache::Test::vars('t_logs');
# The stub answers after 1.5 s, like a model generating, so requests sent
# together are in flight together.
my $port = hl_stub_start('hl_gateway_stub', 1500);
my ($examples) = grep { -d } map { "$_/conf-examples" }
    grep { defined } $ENV{HOTLIMIT_TEST_WORK}, "$FindBin::Bin/..";
my $recipe = do { local (@ARGV, $/) = "$examples/llm-gateway.conf"; <> };
$recipe =~ s/^\s*LoadModule .*$//mg;                 # the test loads them
$recipe =~ s{127\.0\.0\.1:8000}{127.0.0.1:$port}g;   # the stub, not vLLM
# A smaller budget than the recipe's, so 20 requests reach it.
$recipe =~ s{HotLimitQuota 20000/1m 500000/1d}{HotLimitQuota 1000/1m 500000/1d};
my $h = start_httpd(name => 'llm-gateway', conf => hl_proxy_conf($port) . $recipe);
my $base = "http://127.0.0.1:${\ $h->port}/v1";

my $res = $h->{ua}->post("$base/chat/completions", Authorization => 'Bearer sk-a',
                         'Content-Type' => 'application/json',
                         Content => '{"model":"stub-100","max_tokens":100,"messages":[]}');
ok t_cmp($res->code, 200, 'an answer through the gateway');
ok t_cmp($res->header('RateLimit-Policy') // '',
         qr/"1000\/1m";q=1000;w=60, "500000\/1d";q=500000;w=86400, "120\/1m";q=120;w=60/,
         "RateLimit-Policy announces the key's token windows and the address fuse");

# 20 completions of one key at once (the SDK's own client): two streams at
# a time at most, and never more than 1,000 tokens charged.
my $r = hl_node_json('client.js', 'budget', $base, 20, 'stub-200', 200);
# Each reserves 200 + its length / 4 (about 20): 4 fit in 1,000. Node's
# fetch pool may send some after the first ones end, so 2 to 4 answers;
# those sent while two are in flight wait in the key's line (queue=30)
# and are then refused by the token budget, not by the concurrency limit.
ok t_cmp(($r->{answered} // 0) >= 2 && ($r->{answered} // 0) <= 4 ? 1 : 0, 1,
         "20 at once: 2 to 4 answered: $r->{answered}");
my ($conc) = $h->metrics =~ /^hotlimit_concurrency_rejected_total\{[^}]*\} (\d+)/m;
ok t_cmp($conc // -1, 0,
         "... the key's requests beyond two waited in line, none refused for concurrency (hotlimit_concurrency_rejected_total $conc)");
ok t_cmp(($r->{answered} // 0) + ($r->{refused} // 0), 20, '... the others refused with 429');
ok t_cmp(($r->{tokens} // 0) <= 1000 ? 1 : 0, 1, "... tokens charged within the budget: $r->{tokens}");

my $json = $h->{ua}->post("$base/chat/completions", Authorization => 'Bearer sk-b',
                          Accept => '*/*', 'Content-Type' => 'application/json',
                          Content => '{"model":"stub-10","max_tokens":5000,"messages":[]}');
ok t_cmp(($json->code // 0) . ' ' . ($json->header('Content-Type') // ''),
         qr{^429 application/json}, 'a reservation over the budget: a JSON 429 for Accept: */*');

# x-api-key clients, three keys from one address, 450 tokens each: one
# budget per key (keyed by the address they would share 1,000 tokens, and
# the third would be refused).
my @s = map {
    $h->{ua}->post("$base/chat/completions", 'x-api-key' => "sk-ant-$_",
                   'Content-Type' => 'application/json',
                   Content => '{"model":"stub-450","max_tokens":400,"messages":[]}')->code
} 1 .. 3;
ok t_cmp("@s", '200 200 200', 'x-api-key clients: three keys from one address, one budget each');
$res = $h->{ua}->post("$base/chat/completions", 'x-api-key' => 'sk-ant-1',
                      'Content-Type' => 'application/json',
                      Content => '{"model":"stub-450","max_tokens":600,"messages":[]}');
ok t_cmp($res->code, 429, "... and each key's own budget holds (450 spent, 600 more refused)");
