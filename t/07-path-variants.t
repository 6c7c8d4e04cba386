# Route normalization: path variants of /user/login cannot escape its quota
# (3/1m): /user//login/, /user/./login, /user/x/../login and /%75ser/login
# all count against <Location /user/login>, as does the absolute form
# "GET http://host/user/login".
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use HLTest;

plan tests => 8;

my $port = hl_port();

# Raw requests, so no client library can tidy the path up first.
sub raw_get {
    my ($path, %h) = @_;
    my $extra = join '', map { "$_: $h{$_}\r\n" } sort keys %h;
    my $res = hl_raw($port, "GET $path HTTP/1.1\r\nHost: localhost\r\n$extra"
                     . "Connection: close\r\n\r\n") // '';
    my ($code) = $res =~ m{^HTTP/1\.\d (\d{3})};
    return ($code // 0, $res);
}

my @variants = ('/user//login/', '/user/./login', '/user/x/../login');
for my $v (@variants) {
    my ($code) = raw_get($v);
    ok t_cmp($code != 429 && $code != 0 ? 1 : 0, 1, "$v admitted (status $code)");
}
{
    my ($code, $res) = raw_get('/%75ser/login', Accept => 'application/problem+json');
    ok t_cmp($code, 429, '/%75ser/login is the fourth request to /user/login: 429');
    ok t_cmp($res, qr/"route":"\/user\/login"/, 'counted against route /user/login');
}
{
    my ($code) = raw_get('/user/login');
    ok t_cmp($code, 429, 'the plain path is rejected too');
    ($code) = raw_get('/user/login?x=1');
    ok t_cmp($code, 429, 'a query string does not change the route');
    ($code) = raw_get('http://localhost/user/%6Cogin');
    ok t_cmp($code, 429, 'nor does the absolute form of the request target');
}
