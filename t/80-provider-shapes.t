# Provider-shaped 429s and headers, waits in words (issue 26 items 3, 8):
# - HotLimitHeaders draft (= On, the default) sends RateLimit-Policy and
#   RateLimit; Off sends none; openai sends x-ratelimit-*-requests for the
#   request quota with the least remaining and x-ratelimit-*-tokens for the
#   cost= quota, resets as Go durations, and retry-after-ms on a 429;
#   anthropic sends anthropic-ratelimit-* with RFC 3339 resets; several at
#   once; a bad token fails configtest, naming it.
# - HotLimitErrorFormat openai|anthropic: the providers' error bodies, type
#   "tokens" for a cost= quota; an explicit Accept: application/problem+json
#   gets problem details under HotLimitErrorFormat json.
# - The HTML page says how long in words ("2 hours", "2 Stunden"); a banned
#   client is told it is banned and for how long, and its problem+json
#   names the ban, not the quota's policies.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use JSON::PP ();
use POSIX ();
use HotLimitTable;

plan tests => 38;

# Every location but /ban keys by X-Key, so that its refusals never count
# toward the address's ban.
my $conf = <<'CONF';
HotLimitBan 2/1m 1h
<Location /h-default>
    HotLimitQuota 5/1m by=header:X-Key
</Location>
<Location /h-on>
    HotLimitQuota 5/1m by=header:X-Key
    HotLimitHeaders On
</Location>
<Location /h-off>
    HotLimitQuota 5/1m by=header:X-Key
    HotLimitHeaders Off
</Location>
<Location /h-openai>
    HotLimitQuota 3/1m 100/1h by=header:X-Key
    HotLimitQuota 20000/1m by=header:X-Key cost=header:X-Tokens
    HotLimitHeaders openai
</Location>
<Location /h-anthropic>
    HotLimitQuota 3/1m by=header:X-Key
    HotLimitQuota 20000/1m by=header:X-Key cost=header:X-Tokens
    HotLimitHeaders anthropic
</Location>
<Location /h-all>
    HotLimitQuota 3/1m by=header:X-Key
    HotLimitHeaders draft openai anthropic
</Location>
<Location /f-openai>
    HotLimitQuota 1/1m by=header:X-Key
    HotLimitErrorFormat openai
</Location>
<Location /f-openai-tokens>
    HotLimitQuota 1/1m by=header:X-Key cost=header:X-Tokens
    HotLimitErrorFormat openai
</Location>
<Location /f-anthropic>
    HotLimitQuota 1/1m by=header:X-Key
    HotLimitErrorFormat anthropic
</Location>
<Location /f-json>
    HotLimitQuota 1/1m by=header:X-Key
    HotLimitErrorFormat json
</Location>
<Location /html>
    HotLimitQuota 1/2h by=header:X-Key
</Location>
<Location /ban>
    HotLimitQuota 1/1m
</Location>
CONF
my $h = start_httpd(name => 'provider-shapes', conf => $conf);

sub hdrs {
    my ($res, $re) = @_;
    return join ' ', sort map { lc } grep { /$re/i } $res->headers->header_field_names;
}

# --- HotLimitHeaders: draft by default and On, none Off ----------------------------
my $res = $h->get('/h-default', 'X-Key' => 'a');
ok t_cmp($res->header('RateLimit') // '', qr/^"5\/1m";r=4;t=\d+$/, 'default: RateLimit (draft)');
ok t_cmp(hdrs($res, '^(x-ratelimit|anthropic-ratelimit)'), '', 'default: no provider headers');
$res = $h->get('/h-on', 'X-Key' => 'a');
ok t_cmp($res->header('RateLimit-Policy') // '', '"5/1m";q=5;w=60', 'On: RateLimit-Policy (draft)');
$res = $h->get('/h-off', 'X-Key' => 'a');
ok t_cmp(hdrs($res, '^(ratelimit|x-ratelimit|anthropic-ratelimit|retry-after-ms)'), '',
         'Off: no rate-limit header at all');

# --- openai: requests and tokens, Go durations, retry-after-ms ---------------------
$res = $h->get('/h-openai', 'X-Key' => 'o');
ok t_cmp(hdrs($res, '^ratelimit'), '', 'openai alone: no draft headers');
ok t_cmp(join(' ', map { $res->header("x-ratelimit-$_-requests") // '-' } qw(limit remaining)),
         '3 2', 'openai: the request quota with the least remaining (3/1m, not 100/1h)');
ok t_cmp($res->header('x-ratelimit-reset-requests') // '', qr/^(\d+(\.\d+)?s|1m0s)$/,
         'openai: reset-requests as a Go duration');
ok t_cmp($res->header('x-ratelimit-limit-tokens') // '', '20000', 'openai: limit-tokens from the cost= quota');
ok t_cmp($res->header('x-ratelimit-remaining-tokens') // '', qr/^\d+$/, 'openai: remaining-tokens');
ok t_cmp($res->header('x-ratelimit-reset-tokens') // '', qr/^(\d+(\.\d+)?s|1m0s|\d+ms)$/,
         'openai: reset-tokens as a Go duration');
ok t_cmp($res->header('retry-after-ms') // '', '', 'openai: no retry-after-ms when admitted');
$h->get('/h-openai', 'X-Key' => 'o') for 1 .. 2;
$res = $h->get('/h-openai', 'X-Key' => 'o');
ok t_cmp($res->code, 429, 'openai: the 4th is refused');
my ($ms, $ra) = ($res->header('retry-after-ms') // '', $res->header('Retry-After') // 0);
ok t_cmp($ms =~ /^\d+$/ && $ms > 50_000 && $ms <= $ra * 1000 ? 1 : 0, 1,
         "openai: retry-after-ms $ms, within Retry-After $ra s");
ok t_cmp($res->header('x-ratelimit-remaining-requests') // '', '0', 'openai: 0 requests remaining on the 429');

# --- anthropic: RFC 3339 resets -----------------------------------------------------
$res = $h->get('/h-anthropic', 'X-Key' => 'n');
ok t_cmp(join(' ', map { $res->header("anthropic-ratelimit-requests-$_") // '-' } qw(limit remaining)),
         '3 2', 'anthropic: requests limit and remaining');
my $reset = $res->header('anthropic-ratelimit-requests-reset') // '';
ok t_cmp($reset, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'anthropic: reset as an RFC 3339 time');
my $in = -1;
if ($reset =~ /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z$/) {
    local $ENV{TZ} = 'UTC';
    POSIX::tzset();
    $in = POSIX::mktime($6, $5, $4, $3, $2 - 1, $1 - 1900) - time;
}
ok t_cmp($in >= 55 && $in <= 62 ? 1 : 0, 1, "anthropic: about a minute from now ($in s)");
ok t_cmp($res->header('anthropic-ratelimit-tokens-limit') // '', '20000', 'anthropic: tokens limit');
ok t_cmp(hdrs($res, '^(ratelimit|x-ratelimit)'), '', 'anthropic alone: no other format');

# --- several formats at once -------------------------------------------------------
$res = $h->get('/h-all', 'X-Key' => 'x');
ok t_cmp(join(' ', map { defined $res->header($_) ? 1 : 0 }
                  qw(RateLimit x-ratelimit-remaining-requests anthropic-ratelimit-requests-remaining)),
         '1 1 1', 'draft openai anthropic: all three');
ok t_cmp(hdrs($res, 'tokens'), '', '... and no tokens headers without a cost= quota');

# --- the bodies ---------------------------------------------------------------------
sub refused {
    my ($path, @hdr) = @_;
    $h->get($path, 'X-Key' => 'b', @hdr);
    return $h->get($path, 'X-Key' => 'b', @hdr);
}
$res = refused('/f-openai', Accept => '*/*');
my $j = eval { JSON::PP::decode_json($res->content) } // {};
ok t_cmp($res->header('Content-Type') // '', qr{^application/json}, 'openai body: application/json');
ok t_cmp($j->{error}{message} // '',
         qr/^Rate limit reached for \/f-openai on requests \(1\/1m\)\. Please try again in (about )?\d+ (seconds?|minute)\.$/,
         'openai body: error.message says which limit and how long, in words');
ok t_cmp(join(' ', $j->{error}{type} // '-', $j->{error}{code} // '-',
              exists $j->{error}{param} && !defined $j->{error}{param} ? 'null' : '-'),
         'requests rate_limit_exceeded null', 'openai body: type, code, param null');
$res = refused('/f-openai-tokens', 'X-Tokens' => 1);
$j = eval { JSON::PP::decode_json($res->content) } // {};
ok t_cmp($j->{error}{type} // '', 'tokens', 'openai body: type tokens for a cost= quota');
$res = refused('/f-anthropic');
$j = eval { JSON::PP::decode_json($res->content) } // {};
ok t_cmp(join(' ', $j->{type} // '-', $j->{error}{type} // '-'), 'error rate_limit_error',
         'anthropic body: type error, error.type rate_limit_error');
ok t_cmp($j->{error}{message} // '', qr/^Rate limit reached for \/f-anthropic on requests/,
         'anthropic body: our message');

# --- problem+json on an explicit Accept under HotLimitErrorFormat json -------------
$res = refused('/f-json', Accept => 'application/problem+json');
ok t_cmp($res->header('Content-Type') // '', qr{^application/problem\+json},
         'ErrorFormat json, Accept: application/problem+json: problem details');
$res = $h->get('/f-json', 'X-Key' => 'b', Accept => '*/*');
ok t_cmp($res->header('Content-Type') // '', qr{^application/json}, '... Accept: */*: application/json');

# --- the page in words --------------------------------------------------------------
$res = refused('/html', Accept => 'text/html');
ok t_cmp($res->content, qr/Please wait (about 1 hour|2 hours) before trying again\./,
         'HTML: the wait in hours, not seconds');
ok t_cmp($res->content =~ /\d{3,} seconds/ ? 1 : 0, 0, '... never thousands of seconds');
$res = $h->get('/html', 'X-Key' => 'b', Accept => 'text/html', 'Accept-Language' => 'de');
ok t_cmp($res->content, qr/Bitte warten Sie (etwa 1 Stunde|2 Stunden), bevor/, '... and in German');

# --- a banned client ----------------------------------------------------------------
my @c = map { $h->get('/ban')->code } 1 .. 3;
ok t_cmp("@c", '200 429 429', 'by address: 1 admitted, 2 refused (the ban starts)');
$res = $h->get('/ban', Accept => 'text/html');
ok t_cmp($res->content, qr/This address is banned for (about 59 minutes|1 hour) after too many refused requests\./,
         'banned: the page says banned, and for how long in words');
$res = $h->get('/h-default', 'X-Key' => 'z', Accept => 'application/problem+json');
$j = eval { JSON::PP::decode_json($res->content) } // {};
ok t_cmp($res->code, 429, 'banned: every route refuses');
ok t_cmp(join(' ', $j->{banned} ? 'banned' : '-', @{ $j->{'violated-policies'} // [] }), 'banned ban',
         'banned: problem+json names the ban, not 5/1m');
ok t_cmp($j->{detail} // '', qr/^This client is banned for (about 59 minutes|1 hour) after too many refused requests/,
         'banned: detail says banned, in words');

# --- configtest names a bad token ---------------------------------------------------
my $bad = start_httpd(name => 'provider-shapes-bad', start => 0,
                      conf => "<Location /x>\n HotLimitQuota 1/1m\n HotLimitHeaders draft bogus\n</Location>\n");
my $httpd = Apache::Test::vars('httpd');
my $out = `$httpd -t -f '$bad->{conf_file}' 2>&1`;
ok t_cmp(($? != 0 ? 'fails: ' : 'passes: ') . $out, qr/^fails: .*HotLimitHeaders: 'bogus' is not On, Off, draft, openai or anthropic/s,
         'HotLimitHeaders draft bogus: configtest fails naming bogus');
