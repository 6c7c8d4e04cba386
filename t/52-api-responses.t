# API responses (spec sections 2 and 5): RateLimit-Policy lists every
# window of every quota that applies to a request, each policy with a name
# of its own, and RateLimit names the one with the least remaining;
# HotLimitErrorFormat fixes the 429 body for API locations whose clients
# send Accept: */* (Python requests' default).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use JSON::PP ();
use HotLimitTable;

plan tests => 19;

my $h = start_httpd(name => 'api-responses', conf => <<'CONF');
<Location /two>
    HotLimitQuota 5/1m
    HotLimitQuota 5/1m by=header:X-Key
</Location>
<Location /tight>
    HotLimitQuota 10/1m 100/1h
    HotLimitQuota 2/1m by=header:X-Key
</Location>
<Location /budget>
    HotLimitQuota 10/1m
    HotLimitQuota 1000/1h by=header:X-Key cost=header:X-Tokens
</Location>
<Location /one>
    HotLimitQuota 3/1m 20/1h
</Location>
<Location /fmt-json>
    HotLimitQuota 1/1m
    HotLimitErrorFormat json
</Location>
<Location /fmt-problem>
    HotLimitQuota 1/1m
    HotLimitErrorFormat problem
</Location>
<Location /fmt-html>
    HotLimitQuota 1/1m
    HotLimitErrorFormat html
</Location>
<Location /fmt-auto>
    HotLimitQuota 1/1m
</Location>
CONF

# --- every quota's windows, with distinct names ------------------------------------
my $res = $h->get('/two', 'X-Key' => 'a');
ok t_cmp($res->header('RateLimit-Policy') // '', '"5/1m";q=5;w=60, "5/1m-2";q=5;w=60',
         'two quota lines with alike windows: two policies, distinct names');
$h->get('/two', 'X-Key' => 'a');
$res = $h->get('/two', 'X-Key' => 'b');
# The address has spent 3 (2 left), key b 1 (4 left): the address's line.
ok t_cmp($res->header('RateLimit') // '', qr/^"5\/1m";r=2;t=\d+$/,
         'RateLimit names the policy with the least remaining (the address line)');

$res = $h->get('/tight', 'X-Key' => 'k');
ok t_cmp($res->header('RateLimit-Policy') // '',
         '"10/1m";q=10;w=60, "100/1h";q=100;w=3600, "2/1m";q=2;w=60',
         'three windows of two lines: all listed');
ok t_cmp($res->header('RateLimit') // '', qr/^"2\/1m";r=1;t=\d+$/,
         'RateLimit: the per-key line, which has the least left');
$res = $h->get('/tight', 'X-Key' => 'k');
$res = $h->get('/tight', 'X-Key' => 'k');
ok t_cmp($res->code, 429, 'the per-key line refuses the third');
ok t_cmp($res->header('RateLimit-Policy') // '', qr/"2\/1m";q=2;w=60/,
         '... and the 429 still lists every policy');
ok t_cmp($res->header('RateLimit') // '', qr/^"2\/1m";r=0;t=\d+$/,
         '... RateLimit: the refusing policy, r=0');

$res = $h->get('/budget', 'X-Key' => 'k');
ok t_cmp($res->header('RateLimit-Policy') // '', '"10/1m";q=10;w=60, "1000/1h";q=1000;w=3600',
         'a token budget is listed beside the request quota');

$res = $h->get('/one');
ok t_cmp($res->header('RateLimit-Policy') // '', '"3/1m";q=3;w=60, "20/1h";q=20;w=3600',
         'one quota line: as before');
ok t_cmp($res->header('RateLimit') // '', qr/^"3\/1m";r=2;t=\d+$/, '... RateLimit as before');

# --- HotLimitErrorFormat -------------------------------------------------------------
sub refused {
    my ($path, @headers) = @_;
    $h->get($path, @headers);
    return $h->get($path, @headers);
}

$res = refused('/fmt-json', 'Accept' => '*/*');
ok t_cmp($res->code, 429, 'json: 429');
ok t_cmp($res->header('Content-Type') // '', qr{^application/json}, 'json: Accept */* gets application/json');
my $doc = eval { JSON::PP::decode_json($res->content) } // {};
ok t_cmp($doc->{status} // '', 429, '... a JSON object with status 429');
ok t_cmp($doc->{retry_after} // 0, qr/^\d+$/, '... and retry_after');

$res = refused('/fmt-problem', 'Accept' => 'text/html');
ok t_cmp($res->header('Content-Type') // '', qr{^application/problem\+json},
         'problem: even a browser\'s Accept gets problem+json');
$doc = eval { JSON::PP::decode_json($res->content) } // {};
ok t_cmp($doc->{type} // '', 'https://iana.org/assignments/http-problem-types#quota-exceeded',
         '... with the quota-exceeded problem type');

$res = refused('/fmt-html', 'Accept' => 'application/json');
ok t_cmp($res->header('Content-Type') // '', qr{^text/html}, 'html: a JSON Accept still gets the page');

$res = refused('/fmt-auto', 'Accept' => '*/*');
ok t_cmp($res->header('Content-Type') // '', qr{^text/html}, 'auto (default): Accept */* gets HTML');
$res = $h->get('/fmt-auto', 'Accept' => 'application/json');
ok t_cmp($res->header('Content-Type') // '', qr{^application/json}, 'auto: Accept application/json gets JSON');
