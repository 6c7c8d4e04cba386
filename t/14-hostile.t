# Hostile input: very long paths, odd and oversized headers, long cookies
# and API keys never crash a child, and quotas still hold for them.
# by=cookie:NAME and by=header:NAME give one bucket per value and fall back
# to the client address when the cookie or header is absent.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use HLTest;

my @hostile_headers = (
    [ Accept => 'x' x 6000 ],
    [ Accept => join(',', map { "a/b$_;q=0.$_" } 1 .. 500) ],
    [ Accept => 'application/json;q=' . ('9' x 3000) ],
    [ Accept => ';;;,,,;q=;q==;="\\' ],
    [ Accept => 'application/problem+json;q="1' ],
    [ 'Accept-Language' => ('zh-' x 2000) ],
    [ 'Accept-Language' => join(',', map { "l$_;q=0.$_" } 1 .. 550) ],
    [ 'Accept-Language' => "\xff\xfe\x80\xc3(;q=1" ],
    [ 'X-Requested-With' => "XMLHttpRequest\xff" . ('y' x 5000) ],
    [ 'User-Agent' => "\"\xc3\x28 evil agent\n" =~ s/\n//r . ('z' x 6000) ],
);
my @odd_paths = (
    '/oddreq/%00', '/oddreq/%2F..%2F..%2Fetc%2Fpasswd', '/oddreq/%ff%fe',
    '/oddreq/' . ('%41' x 2000), '/oddreq/../../../../etc/passwd',
    '/oddreq/;x=1', '/oddreq/%u0041', "/oddreq/\xe4\xb8\xad\xe6\x96\x87",
    '/oddreq//////////' . ('/' x 3000),
);

plan tests => 6 + @hostile_headers + 2 + @odd_paths + 9 + 10 + 3;

my $port = hl_port();
my $eoff = hl_offset(hl_error_log());

# Sends GET $path with the header lines given; returns (status, response).
sub raw {
    my ($path, @h) = @_;
    my $extra = '';
    while (my ($k, $v) = splice @h, 0, 2) { $extra .= "$k: $v\r\n" }
    my $res = hl_raw($port, "GET $path HTTP/1.1\r\nHost: localhost\r\n$extra"
                     . "Connection: close\r\n\r\n") // '';
    my ($code) = $res =~ m{^HTTP/1\.\d (\d{3})};
    return ($code // 0, $res);
}
sub codes { my ($path, @h) = @_; my $n = pop @h; join ' ', map { (raw($path, @h))[0] } 1 .. $n }

# --- /hostile 3/1m: long request targets count, and the quota holds ---------------------
# A path longer than PATH_MAX cannot be mapped to a file: httpd itself
# answers 403 (AH00127) at map_to_storage, before any access checker and
# any handler, so it neither reaches the module nor the content.
{
    my ($code) = raw('/hostile/' . ('A' x 8000));
    ok t_cmp($code, 403, '8000-character file name: 403 from httpd before the module');
}
# Long targets that do reach the module are counted: a 3,900-character
# path of short segments, an 8,000-character query string, both.
{
    my ($code) = raw('/hostile/' . join('/', ('seg1xyz') x 487));
    ok t_cmp($code, 404, '3,900-character path under /hostile: 404, counted');
    ($code) = raw('/hostile/?' . ('q=' . ('x' x 60) . '&') x 125);
    ok t_cmp($code, 200, '8,000-character query string under /hostile: 200, counted');
    ($code) = raw('/hostile/' . join('/', ('seg2xyz') x 300) . '?' . ('r' x 5000));
    ok t_cmp($code, 404, 'long path and long query together: 404, counted');
}
{
    my ($code) = raw('/hostile/');
    ok t_cmp($code, 429, 'after 3 long paths /hostile/ is at its limit: 429');
    ($code) = raw('/hostile/' . ('Q' x 8200));
    ok t_cmp($code, 414, 'a request line beyond LimitRequestLine: 414 from httpd');
}
# At the limit, the 429 is negotiated from hostile headers: always a 429.
for my $h (@hostile_headers) {
    my ($code, $res) = raw('/hostile/', @$h);
    my ($ct) = $res =~ /^Content-Type: ([^\r\n]*)/mi;
    ok t_cmp("$code " . ($ct // ''), qr{^429 (?:text/html|application/(?:problem\+)?json)},
             "hostile $h->[0] (" . length($h->[1]) . " bytes): still 429, a sound body");
}
{
    my ($code, $res) = raw('/hostile/', map { ("X-Junk-$_" => 'j' x 100) } 1 .. 90);
    ok t_cmp($code, 429, '90 junk headers: 429');
    ($code) = raw('/hostile/', Cookie => join('; ', map { "c$_=" . ('v' x 60) } 1 .. 100));
    ok t_cmp($code, 429, 'a 6 KB cookie header of 100 cookies: 429');
}
# Odd paths under a generous quota: every one answered, none a 5xx.
for my $p (@odd_paths) {
    my ($code) = raw($p);
    ok t_cmp($code != 0 && $code < 500 ? 1 : 0, 1,
             'odd path ' . (length($p) > 40 ? substr($p, 0, 40) . '...' : $p) . ": answered $code");
}

# --- by=cookie:sid, /hcookie 2/1m -------------------------------------------------------------
{
    my $a = 'a' . ('A' x 6000);
    my $b = 'b' . ('A' x 6000);
    ok t_cmp(codes('/hcookie/', Cookie => "sid=$a", 3), '200 200 429', 'cookie sid=a... (6 KB): 2, then 429');
    ok t_cmp(codes('/hcookie/', Cookie => "sid=$b", 2), '200 200', 'another sid (6 KB) has its own bucket');
    ok t_cmp(codes('/hcookie/', Cookie => "x=1; sid=$a; y=2", 1), '429',
             'sid=a among other cookies: the same bucket');
    ok t_cmp(codes('/hcookie/', Cookie => "sid=\"$b\"", 1), '200',
             'a quoted sid: another value, as for PHP (quotes are kept)');
    ok t_cmp(codes('/hcookie/', Cookie => 'sid=short1', 2), '200 200', 'a short sid: its own bucket');
    ok t_cmp(codes('/hcookie/', 3), '200 200 429', 'no cookie: falls back to the client address');
    ok t_cmp(codes('/hcookie/', Cookie => 'other=1', 1), '429', 'a cookie without sid: the address bucket');
    ok t_cmp(codes('/hcookie/', Cookie => 'sid=', 1), '429', 'an empty sid: the address bucket');
    ok t_cmp(codes('/hcookie/', Cookie => 'sid=short2', 1), '200', 'yet another sid still admitted');
}

# --- by=header:X-Api-Key, /hkey 2/1m ------------------------------------------------------------
{
    my $k1 = '1' . ('K' x 6143);
    my $k2 = '2' . ('K' x 6143);
    ok t_cmp(codes('/hkey/', 'X-Api-Key' => $k1, 3), '200 200 429', 'X-Api-Key k1 (6 KB): 2, then 429');
    ok t_cmp(codes('/hkey/', 'X-Api-Key' => $k2, 3), '200 200 429', 'X-Api-Key k2 (6 KB): its own bucket');
    ok t_cmp(codes('/hkey/', 'X-Api-Key' => $k1, 1), '429', 'k1 still spent');
    ok t_cmp(codes('/hkey/', 2), '200 200', 'no X-Api-Key: the client address bucket, fresh');
    ok t_cmp(codes('/hkey/', 1), '429', 'no X-Api-Key: 429 after 2');
    ok t_cmp(codes('/hkey/', 'X-Api-Key' => '', 1), '429', 'an empty X-Api-Key: the address bucket');
    ok t_cmp(codes('/hkey/', 'X-Api-Key' => "k3\xff\x80\t", 2), '200 200', 'a key with odd bytes: its own bucket');
    # One credential, however it is spelled: an application that reads the
    # scheme without case ("bearer") and splits on white space would take
    # all of these for one key; so does the limiter.
    ok t_cmp(join(' ', map { codes('/hkey/', 'X-Api-Key' => $_, 1) }
                  'Bearer tok4', 'bearer tok4', "BEARER \t tok4"),
             '200 200 429', 'Bearer / bearer / BEARER<ws>tok4: one bucket');
    my ($code, $res) = raw('/hkey/', 'X-Api-Key' => $k1, Accept => 'application/json');
    ok t_cmp($res, qr/"route":"\/hkey"/, 'the 429 of a by=header quota names the route');
    ok t_cmp($res !~ /KKKKKKKK/ ? 1 : 0, 1, 'the 429 does not echo the key');
}

# --- the server survived --------------------------------------------------------------------------
ok t_cmp(hl_server_up($port), 1, 'the server still answers');
my @e = hl_lines_since(hl_error_log(), $eoff);
ok t_cmp(join("\n", grep { /exit signal|Segmentation fault|AH00052/ } @e), '',
         'no child exited on a signal');
ok t_cmp(scalar(grep { /hkey|KKKKKKKK/ && /KKKKKKKKKKKKKKKK/ } @e), 0,
         'the error log never holds an API key in clear');
