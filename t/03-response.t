# Every part of the 429 and of the RateLimit headers: status, Retry-After,
# Cache-Control, Vary, RateLimit-Policy / RateLimit on admitted and
# rejected responses, body negotiation (problem+json, json, XHR, HTML with
# q-values), the page's languages, ErrorDocument 429 and
# HotLimitErrorTemplate.
use strict;
use warnings FATAL => 'all';
use utf8;
use FindBin;
use lib "$FindBin::Bin/lib";
use Encode ();
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

my %langs = (
    en => 'Too many requests',
    zh => '请求过于频繁',
    es => 'Demasiadas solicitudes',
    fr => 'Trop de requêtes',
    de => 'Zu viele Anfragen',
    ar => 'طلبات كثيرة جدًا',
    ja => 'リクエストが多すぎます',
);
my @lang_cases = (
    [ 'en-US,en;q=0.9',                   'en' ],
    [ 'zh-CN,zh;q=0.9,en;q=0.8',          'zh' ],
    [ 'es-ES,es;q=0.9',                   'es' ],
    [ 'fr-FR, fr;q=0.9, en;q=0.5',        'fr' ],
    [ 'de',                               'de' ],
    [ 'ar-EG,ar;q=0.9',                   'ar' ],
    [ 'ja-JP',                            'ja' ],
    [ 'ko-KR, ko;q=0.9',                  'en' ],   # unknown: English
    [ 'ko, de;q=0.8, fr;q=0.9',           'fr' ],   # q-values honoured
);

plan tests => 5 * 4 + 14 + 3 + 2 + 5 + 2 + 12 + 9 + @lang_cases * 3 + 9 + 9;

my $PROBLEM_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';
my $BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

# Bodies stay UTF-8 bytes (so test output never prints wide characters).
sub body { $_[0]->content }
$_ = Encode::encode('UTF-8', $_) for values %langs;
sub vary_has_accept {
    my $res = shift;
    return (grep { /^\s*accept\s*$/i } map { split /,/ } $res->header('Vary')) ? 1 : 0;
}

# --- RateLimit headers on admitted responses, then the 429 -----------------
for my $i (1 .. 5) {
    my $res = GET '/hdr/';
    ok t_cmp($res->code, 200, "/hdr request $i admitted");
    ok t_cmp($res->header('RateLimit-Policy'), '"5/1m";q=5;w=60',
             "request $i: RateLimit-Policy");
    my ($r, $t) = ($res->header('RateLimit') // '') =~ /^"5\/1m";r=(\d+);t=(\d+)$/;
    ok t_cmp($r, 5 - $i, "request $i: RateLimit r= counts down");
    ok t_cmp(defined $t && $t >= 1 && $t <= 60 ? 1 : 0, 1,
             "request $i: RateLimit t=$t within the window");
}
{
    my $res = GET '/hdr/';
    ok t_cmp($res->code, 429, 'sixth request: 429');
    my $ra = $res->header('Retry-After') // '';
    ok t_cmp($ra, qr/^\d+$/, 'Retry-After is an integer');
    ok t_cmp($ra >= 1 && $ra <= 60 ? 1 : 0, 1, "Retry-After $ra in [1, 60]");
    ok t_cmp($res->header('Cache-Control'), 'no-store', 'Cache-Control: no-store');
    ok t_cmp(vary_has_accept($res), 1, 'Vary contains Accept');
    ok t_cmp($res->header('RateLimit-Policy'), '"5/1m";q=5;w=60', '429: RateLimit-Policy');
    my ($r, $t) = ($res->header('RateLimit') // '') =~ /^"5\/1m";r=(\d+);t=(\d+)$/;
    ok t_cmp($r, 0, '429: RateLimit r=0');
    ok t_cmp(defined $t && $t >= 1 && $t <= 60 && abs($t - $ra) <= 1 ? 1 : 0, 1,
             "429: RateLimit t=$t agrees with Retry-After");
    ok t_cmp($res->header('Content-Type'), qr{^text/html}, 'no Accept: HTML');
    my $b = body($res);
    ok t_cmp($b, qr{<meta name="robots" content="noindex, nofollow">}, 'noindex meta');
    ok t_cmp($b, qr{<html lang="en"}, 'English page by default');
    ok t_cmp($b, qr{Please wait (about )?\d+ (seconds?|minutes?) before trying again}, 'says how long to wait, in words');
    ok t_cmp($b, qr{<a class="home" href="/">}, 'home link');
    ok t_cmp($b !~ m{(?:src|href)="https?://} ? 1 : 0, 1, 'self-contained: no external assets');
}
# An unlimited route carries none of it.
{
    my $res = GET '/hl-free/';
    ok t_cmp($res->code, 200, 'unlimited route: 200');
    ok t_cmp(defined $res->header('RateLimit-Policy') ? 1 : 0, 0, 'unlimited: no RateLimit-Policy');
    ok t_cmp(defined $res->header('RateLimit') ? 1 : 0, 0, 'unlimited: no RateLimit');
}

# --- the 429 on a keep-alive connection ---------------------------------------------
# Two pipelined requests on one connection: the 429's framing is exact, so
# the next response follows it intact; HEAD gets the headers only.
{
    my $port = hl_port();
    my $res = hl_raw($port, "GET /hdr/ HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\r\n"
                     . "HEAD /hdr/ HTTP/1.1\r\nHost: localhost\r\n\r\n"
                     . "GET /hl-free/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n") // '';
    my @status = $res =~ m{HTTP/1\.1 (\d{3}) }g;   # a JSON body ends without a newline
    ok t_cmp("@status", '429 429 200', 'keep-alive: 429, 429 (HEAD), then 200 on the same connection');
    my ($len) = $res =~ /^Content-Length: (\d+)\r$/mi;
    my ($body) = $res =~ /\r\n\r\n(\{.*?\})HTTP\/1\.1 429/s;
    ok t_cmp(defined $body && length($body) == $len ? 1 : 0, 1, 'keep-alive: Content-Length matches the JSON body');
}

# --- HotLimitHeaders Off ---------------------------------------------------------
{
    my $res = GET '/nohdr/';
    ok t_cmp($res->code, 200, 'HotLimitHeaders Off: first admitted');
    ok t_cmp(join(',', grep { defined } $res->header('RateLimit-Policy'), $res->header('RateLimit')),
             '', 'HotLimitHeaders Off: no RateLimit headers when admitted');
    $res = GET '/nohdr/';
    ok t_cmp($res->code, 429, 'HotLimitHeaders Off: second rejected');
    ok t_cmp(join(',', grep { defined } $res->header('RateLimit-Policy'), $res->header('RateLimit')),
             '', 'HotLimitHeaders Off: no RateLimit headers on the 429');
    ok t_cmp($res->header('Retry-After') // '', qr/^\d+$/, 'HotLimitHeaders Off: Retry-After kept');
}

# --- negotiation -------------------------------------------------------------------
ok t_cmp(GET('/neg/')->code, 200, '/neg: first admitted');
ok t_cmp(GET('/neg/')->code, 429, '/neg: second rejected');
{
    my $res = GET '/neg/', Accept => 'application/problem+json';
    ok t_cmp($res->code, 429, 'problem+json: 429');
    ok t_cmp($res->header('Content-Type'), qr{^application/problem\+json\b},
             'problem+json: Content-Type');
    my $j = hl_json($res) || {};
    ok t_cmp($j->{type}, $PROBLEM_TYPE, 'problem+json: type URL');
    ok t_cmp($j->{title}, 'Too Many Requests', 'problem+json: title');
    ok t_cmp($j->{status}, 429, 'problem+json: status');
    ok t_cmp($j->{retry_after}, $res->header('Retry-After'), 'problem+json: retry_after = Retry-After');
    ok t_cmp(($j->{retry_after} // 0) >= 1 && ($j->{retry_after} // 0) <= 60 ? 1 : 0, 1,
             'problem+json: retry_after in [1, 60]');
    ok t_cmp($j->{route}, '/neg', 'problem+json: route');
    ok t_cmp(join(',', @{ $j->{'violated-policies'} || [] }), '1/1m', 'problem+json: violated-policies');
    ok t_cmp($j->{detail} // '', qr/\S/, 'problem+json: a detail');
    ok t_cmp($res->header('Cache-Control'), 'no-store', 'problem+json: Cache-Control');
    ok t_cmp(vary_has_accept($res), 1, 'problem+json: Vary: Accept');
}
{
    my $res = GET '/neg/', Accept => 'application/json';
    ok t_cmp($res->header('Content-Type'), qr{^application/json\b}, 'application/json: Content-Type');
    my $j = hl_json($res) || {};
    ok t_cmp(($j->{status} // 0) . ' ' . ($j->{type} // ''), "429 $PROBLEM_TYPE",
             'application/json: the same problem object');
    $res = GET '/neg/', Accept => '*/*', 'X-Requested-With' => 'XMLHttpRequest';
    ok t_cmp($res->header('Content-Type'), qr{^application/json\b}, 'XMLHttpRequest: JSON');
    ok t_cmp((hl_json($res) || {})->{route}, '/neg', 'XMLHttpRequest: problem object');
    $res = GET '/neg/', Accept => $BROWSER;
    ok t_cmp($res->header('Content-Type'), qr{^text/html}, 'browser Accept: HTML');
    ok t_cmp(body($res), qr{<meta name="robots" content="noindex, nofollow">}, 'browser: noindex');
    $res = GET '/neg/', Accept => 'application/json;q=0.1, text/html';
    ok t_cmp($res->header('Content-Type'), qr{^text/html}, 'application/json;q=0.1, text/html: HTML');
    $res = GET '/neg/', Accept => 'text/html;q=0.5, application/problem+json';
    ok t_cmp($res->header('Content-Type'), qr{^application/problem\+json},
             'text/html;q=0.5, application/problem+json: problem');
    $res = GET '/neg/', Accept => 'application/json;q=0, text/plain';
    ok t_cmp($res->header('Content-Type'), qr{^text/html}, 'json with q=0 is refused: HTML');
}
for my $c (@lang_cases) {
    my ($al, $want) = @$c;
    my $res = GET '/neg/', Accept => $BROWSER, 'Accept-Language' => $al;
    my $b = body($res);
    ok t_cmp($res->code, 429, "Accept-Language '$al': 429");
    ok t_cmp($b, qr{<html lang="$want" dir="(?:ltr|rtl)">}, "Accept-Language '$al': lang=$want");
    ok t_cmp(index($b, $langs{$want}) >= 0 ? 1 : 0, 1,
             "Accept-Language '$al': the page says '$langs{$want}'");
    t_debug(substr($b, -600)) if index($b, $langs{$want}) < 0;
}

# --- ErrorDocument 429 --------------------------------------------------------------
ok t_cmp(GET('/edoc/')->code, 200, '/edoc: first admitted');
{
    my $res = GET '/edoc/', Accept => $BROWSER;
    ok t_cmp($res->code, 429, 'ErrorDocument: status stays 429');
    ok t_cmp(body($res), qr/LOCAL-ERRORDOCUMENT-429/, 'ErrorDocument: its content is served');
    my $ra = $res->header('Retry-After') // '';
    ok t_cmp($ra =~ /^\d+$/ && $ra >= 1 && $ra <= 60 ? 1 : 0, 1, "ErrorDocument: Retry-After $ra kept");
    ok t_cmp($res->header('Cache-Control') // '', 'no-store', 'ErrorDocument: Cache-Control kept');
    ok t_cmp($res->header('RateLimit-Policy') // '', '"1/1m";q=1;w=60', 'ErrorDocument: RateLimit-Policy kept');
    $res = GET '/edoc/', Accept => 'application/json';
    ok t_cmp($res->code, 429, 'ErrorDocument, JSON client: 429');
    ok t_cmp($res->header('Content-Type'), qr{^application/json\b}, 'ErrorDocument, JSON client: JSON');
    ok t_cmp((hl_json($res) || {})->{route}, '/edoc', 'ErrorDocument, JSON client: problem object');
}

# --- HotLimitErrorTemplate (virtual host hl_tpl) ------------------------------------
Apache::TestRequest::module('hl_tpl');
{
    my $first = GET '/tpl&x/';
    ok t_cmp($first->code != 429 ? 1 : 0, 1, 'template vhost: first request admitted');
    my $res = GET '/tpl&x/', Accept => $BROWSER, 'Accept-Language' => 'fr';
    my $b = body($res);
    ok t_cmp($res->code, 429, 'template: 429');
    ok t_cmp($res->header('Content-Type'), qr{^text/html}, 'template: HTML');
    my ($ra) = $b =~ /retry=(\d+) /;
    ok t_cmp($ra, $res->header('Retry-After'), '{{RETRY_AFTER}} = Retry-After');
    ok t_cmp($b, qr{CUSTOM-TEMPLATE retry=\d+ limit=1 window=1m route=/tpl&amp;x lang=fr</p>},
             'placeholders replaced, {{ROUTE}} HTML-escaped');
    ok t_cmp($b, qr{<html lang="fr">}, '{{LANG}} from Accept-Language');
    ok t_cmp($b, qr/\{\{route\}\} \{\{UNKNOWN\}\} \{\{ lone/, 'other braces left alone');
    $res = GET '/tpl&x/', Accept => 'application/problem+json';
    ok t_cmp($res->header('Content-Type'), qr{^application/problem\+json}, 'template vhost: JSON clients get JSON');
    ok t_cmp((hl_json($res) || {})->{route}, '/tpl&x', 'template vhost: route in JSON unescaped');
}
Apache::TestRequest::module('default');
