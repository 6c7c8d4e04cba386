# cost=usage: a request is charged the tokens its LLM answer reports in
# its body (usage.total_tokens, else prompt + completion, else input +
# output), read as the body passes: a JSON answer, or a text/event-stream
# whose events still leave one by one. On a private httpd (mod_proxy and
# mod_proxy_http loaded if the run has not), in front of a stub upstream
# (t/support/llm_stub.py) speaking the OpenAI Chat Completions, Responses
# and Anthropic Messages shapes; under prefork, PHP scripts answer too.
#
# Every key has `HotLimitQuota 1000/1m cost=usage`: answers of 400 leave
# 599 after the second admission (1000 - 400 - 1 for the request itself),
# the third is admitted with 200 left, the fourth refused.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use IO::Select ();
use IO::Socket::INET ();
use POSIX ();
use Time::HiRes qw(time sleep);
use HotLimitTable;

my $php = hl_have_php();
# HTTP/2 (h2c): the event run loads mod_http2; curl speaks it.
my $h2 = hl_mpm() eq 'event' && `curl -V 2>/dev/null` =~ /\bHTTP2\b/ ? 1 : 0;
my @shapes = qw(chat-json chat-sse responses-json responses-sse
                anthropic-json anthropic-sse);
plan tests => 3 * @shapes + 3 + 4 + 1 + 1 + 2 + 2 + ($php ? 7 : 0);
my $mpm = hl_mpm();

# --- the upstream stub ---------------------------------------------------------
my $parent = $$;
my $up_port = free_port();
my $stub = fork // die "fork: $!";
if (!$stub) {
    { exec 'python3', "$FindBin::Bin/support/llm_stub.py", $up_port }
    POSIX::_exit(127);
}
END { if ($stub && $$ == $parent) { local $?; kill 'TERM', $stub; waitpid $stub, 0 } }
wait_until(sub {
    IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $up_port,
                          Proto => 'tcp') }, 10)
    or die "the stub upstream did not start on port $up_port\n";

my $moddir = Apache::Test::vars('libexecdir') || '/usr/lib/apache2/modules';

my %php_files = (
    'php/chat.php' => <<'PHP',
<?php
header('Content-Type: application/json');
$n = (int)($_GET['tokens'] ?? 400);
echo json_encode(['id' => 'chatcmpl-php', 'object' => 'chat.completion',
    'choices' => [['index' => 0, 'finish_reason' => 'stop',
                   'message' => ['role' => 'assistant',
                                 'content' => 'say "usage":{"total_tokens":1}']]],
    'usage' => ['prompt_tokens' => 100, 'completion_tokens' => $n - 100,
                'total_tokens' => $n]]);
PHP
    'php/sse.php' => <<'PHP',
<?php
header('Content-Type: text/event-stream');
header('Cache-Control: no-cache');
while (ob_get_level() > 0)
    ob_end_flush();
$n = (int)($_GET['tokens'] ?? 400);
$gap = (int)($_GET['gap'] ?? 0);
foreach (['Hello', 'from', 'PHP'] as $i => $w) {
    if ($i && $gap)
        usleep($gap * 1000);
    echo 'data: ', json_encode(['choices' => [['index' => 0,
        'delta' => ['content' => $w]]], 'usage' => null]), "\n\n";
    flush();
}
if ($gap)
    usleep($gap * 1000);
echo 'data: ', json_encode(['choices' => [], 'usage' => ['prompt_tokens' => 100,
    'completion_tokens' => $n - 100, 'total_tokens' => $n]]), "\n\n";
echo "data: [DONE]\n\n";
PHP
);

my $h = start_httpd(name => 'usage', files => $php ? \%php_files : {},
                    table => { routes => { '/tbl' => {
                        limits => ['1000/1m'], by => 'header:Authorization',
                        cost => 'usage' } } },
                    conf => <<"CONF");
<IfModule !proxy_module>
    LoadModule proxy_module $moddir/mod_proxy.so
</IfModule>
<IfModule !proxy_http_module>
    LoadModule proxy_http_module $moddir/mod_proxy_http.so
</IfModule>
LogLevel info hotlimit:debug
<IfModule http2_module>
    Protocols h2c http/1.1
</IfModule>
<Location /up/>
    ProxyPass http://127.0.0.1:$up_port/
    HotLimitQuota 1000/1m by=header:Authorization cost=usage
</Location>
<Location /php/>
    HotLimitQuota 1000/1m by=header:Authorization cost=usage
</Location>
# The table's "cost": "usage", on /tbl (proxied like /up/).
HotLimitQuotaTable \@DIR\@/table.json
ProxyPass /tbl/ http://127.0.0.1:$up_port/
CONF

# The charge happens in log_transaction, after the client has the answer:
# give it a moment before the next decision.
sub call {
    my ($path, $key) = @_;
    my $res = $h->get($path, Authorization => "Bearer $key");
    sleep 0.3;
    return $res;
}

# Returns r= of the RateLimit header (what is left after this request).
sub remaining_of {
    my ($res) = @_;
    my ($r) = ($res->header('RateLimit') // '') =~ /;r=(\d+)/;
    return $r // -1;
}

# Calls $path four times with key $key; checks the codes, and what is
# left after the second and third admissions.
sub four_calls {
    my ($path, $key, $what) = @_;
    my @res = map { call($path, $key) } 1 .. 4;
    ok t_cmp(join(' ', map { $_->code } @res), '200 200 200 429',
             "[$mpm] $what: 400 + 400 + 400 admitted (800 < 1000), then refused");
    ok t_cmp(remaining_of($res[1]), 599, "[$mpm] $what: the first answer charged 400");
    ok t_cmp(remaining_of($res[2]), 199, "[$mpm] $what: the second charged 400");
}

# Sends GET $path on a raw socket; returns (seconds from the request to
# the first "data:" byte, to the end of the answer, the answer).
sub timed_stream {
    my ($path, $key) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port,
                                  Proto => 'tcp', Timeout => 10) or die $!;
    my $t0 = time;
    print {$s} "GET $path HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             . "Authorization: Bearer $key\r\nConnection: close\r\n\r\n";
    my ($buf, $first) = ('', undef);
    my $sel = IO::Select->new($s);
    while ($sel->can_read(10)) {
        my $n = sysread $s, $buf, 65536, length $buf;
        last unless $n;
        $first //= time - $t0 if $buf =~ /\r\n\r\n.*data:/s;
    }
    my $end = time - $t0;
    close $s;
    sleep 0.3;
    return ($first // $end, $end, $buf);
}

# --- each shape through mod_proxy_http -------------------------------------------
for my $shape (@shapes) {
    four_calls("/up/$shape?tokens=400", $shape, $shape);
}

# --- a fake usage in the model's text is text ---------------------------------
my $res = call('/up/chat-json?fake=1', 'fake-only');
$res = call('/up/chat-json?fake=1', 'fake-only');
ok t_cmp(remaining_of($res), 998,
         "[$mpm] JSON whose only usage is in the text: charged 1, not the fake");
$res = call('/up/chat-json?fake=1&tokens=400', 'fake-json');
$res = call('/up/chat-json?fake=1&tokens=400', 'fake-json');
ok t_cmp(remaining_of($res), 599, "[$mpm] JSON with a fake and a real usage: the real 400");
$res = call('/up/chat-sse?fake=1&tokens=400', 'fake-sse');
$res = call('/up/chat-sse?fake=1&tokens=400', 'fake-sse');
ok t_cmp(remaining_of($res), 599, "[$mpm] SSE with a fake usage in a delta: the real 400");

# --- a stream is not held back ------------------------------------------------
# 5 events 300 ms apart (1.2 s): the first reaches the client long before
# the last; held until the end, both would come together.
my ($first, $end, $body) = timed_stream('/up/chat-sse?tokens=400&gap=300&words=1',
                                        'slow');
ok t_cmp($body =~ /data: \[DONE\]/ ? 1 : 0, 1, "[$mpm] the whole stream arrived");
ok t_cmp($end >= 1.1 ? 1 : 0, 1, "[$mpm] the stream took its 1.2 s (took $end)");
ok t_cmp($end - $first >= 0.8 ? 1 : 0, 1,
         sprintf("[$mpm] the first event came %.2f s before the end (not buffered)",
                 $end - $first));
$res = call('/up/chat-sse?tokens=1', 'slow');
ok t_cmp(remaining_of($res), 599, "[$mpm] the slow stream's usage was charged");

# --- a stream the client drops is charged what it reported so far -----------
# Anthropic's message_start says input 100, output 1; the client leaves
# after it, long before message_delta would say output 300.
{
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port,
                                  Proto => 'tcp', Timeout => 10) or die $!;
    print {$s} "GET /up/anthropic-sse?tokens=400&gap=300&words=3 HTTP/1.1\r\n"
             . "Host: 127.0.0.1\r\nAuthorization: Bearer dropped\r\n"
             . "Connection: close\r\n\r\n";
    my $buf = '';
    my $sel = IO::Select->new($s);
    while ($buf !~ /message_start.*\n\n/s && $sel->can_read(5)) {
        sysread($s, $buf, 65536, length $buf) or last;
    }
    close $s;
    sleep 2;        # httpd notices at its next writes, then logs
    $res = call('/up/chat-json?tokens=1', 'dropped');
    ok t_cmp(remaining_of($res), 898,
             "[$mpm] a dropped stream: charged the 101 its first event reported");
}

# --- the table's "cost": "usage" -------------------------------------------------
my @c = map { call('/tbl/anthropic-sse?tokens=400', 'table')->code } 1 .. 4;
ok t_cmp("@c", '200 200 200 429', "[$mpm] table rule with \"cost\": \"usage\"");

# --- what was read is logged at debug level ----------------------------------
ok t_cmp(scalar(grep { /HL01400: cost=usage: 400 tokens reported, charged 400/ }
                $h->log_lines(0)) > 0 ? 1 : 0, 1,
         "[$mpm] HL01400 logs the tokens read");
ok t_cmp(scalar(grep { /HL01400: cost=usage: no usage, charged 1/ }
                $h->log_lines(0)) > 0 ? 1 : 0, 1,
         "[$mpm] HL01400 logs an answer without usage");

# --- over HTTP/2: each stream is a request with its own filter ---------------
if ($h2) {
    my @out = map {
        my $o = `curl -s -i --http2-prior-knowledge -H 'Authorization: Bearer h2' '${\ $h->url('/up/chat-sse?tokens=400')}'`;
        sleep 0.3;
        $o;
    } 1 .. 2;
    ok t_cmp($out[1], qr{^HTTP/2 200}, "[$mpm] the stream over HTTP/2 (h2c)");
    my ($r) = $out[1] =~ /^ratelimit:.*;r=(\d+)/mi;
    ok t_cmp($r // -1, 599, "[$mpm] HTTP/2: the first stream's usage charged 400");
} else {
    skip("HTTP/2: the event run's mod_http2 and curl with HTTP/2 needed", 0) for 1 .. 2;
}

exit 0 unless $php;

# --- PHP (prefork + mod_php) --------------------------------------------------
$res = call('/php/chat.php?tokens=400', 'php-json');
ok t_cmp($res->content, qr/"total_tokens":400/, "[$mpm] PHP answered its JSON");
@c = ($res->code, map { call('/php/chat.php?tokens=400', 'php-json')->code } 1 .. 3);
ok t_cmp("@c", '200 200 200 429', "[$mpm] PHP JSON: 400 + 400 + 400, then refused");
$res = call('/php/sse.php?tokens=400', 'php-sse');
ok t_cmp($res->content, qr/data: \[DONE\]/, "[$mpm] PHP streamed its events");
$res = call('/php/sse.php?tokens=400', 'php-sse');
ok t_cmp(remaining_of($res), 599, "[$mpm] PHP SSE: the final usage chunk charged 400");
@c = map { call('/php/sse.php?tokens=400', 'php-sse')->code } 1 .. 2;
ok t_cmp("@c", '200 429', "[$mpm] PHP SSE: third admitted, fourth refused");
($first, $end, $body) = timed_stream('/php/sse.php?tokens=400&gap=400', 'php-slow');
ok t_cmp($end - $first >= 0.8 ? 1 : 0, 1,
         sprintf("[$mpm] PHP's flush()ed events are not held back (first %.2f s, "
                 . "end %.2f s)", $first, $end));
$res = call('/php/sse.php?tokens=1', 'php-slow');
ok t_cmp(remaining_of($res), 599, "[$mpm] the slow PHP stream's usage was charged");
