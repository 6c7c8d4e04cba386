# Scopes: a <Location> quota is shared by every URL under it; a nested
# <Location> with its own quota replaces the parent's; HotLimitEngine Off
# exempts a scope; <LocationMatch>, <Directory>, <Files> and .htaccess
# (AllowOverride Limit) quotas.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 43;

sub json429 { hl_json(GET($_[0], Accept => 'application/problem+json')) || {} }

# --- <Location /scope>: one counter for the whole section ----------------------
ok t_cmp(GET('/scope/')->code, 200, '/scope/ admitted (1 of 3)');
ok t_cmp(GET('/scope/a.html')->code, 200, '/scope/a.html admitted (2 of 3)');
ok t_cmp(GET('/scope/missing.html')->code, 404, 'a 404 under /scope counts too (3 of 3)');
ok t_cmp(GET('/scope/a.html')->code, 429, 'fourth URL under /scope rejected');
{
    my $j = json429('/scope/');
    ok t_cmp($j->{route}, '/scope', 'route of the section is /scope');
}

# --- nested <Location /scope/inner> replaces the parent's quota ------------------
for my $i (1 .. 5) {
    my $res = GET '/scope/inner/';
    ok t_cmp($res->code, 200, "/scope/inner/ $i admitted although /scope is spent");
}
{
    my $res = GET '/scope/inner/', Accept => 'application/problem+json';
    ok t_cmp($res->code, 429, 'sixth /scope/inner/ rejected: its own 5/1m');
    ok t_cmp($res->header('RateLimit-Policy'), '"5/1m";q=5;w=60', 'inner policy only');
    ok t_cmp((hl_json($res) || {})->{route}, '/scope/inner', 'inner route');
}

# --- HotLimitEngine Off exempts /scope/health --------------------------------------
{
    my @codes = map { GET('/scope/health/')->code } 1 .. 6;
    ok t_cmp("@codes", '200 200 200 200 200 200', 'HotLimitEngine Off: never limited');
    my $res = GET '/scope/health/';
    ok t_cmp(defined $res->header('RateLimit-Policy') ? 1 : 0, 0,
             'HotLimitEngine Off: no RateLimit headers');
}

# --- <LocationMatch "^/lm/[0-9]+$"> ---------------------------------------------
ok t_cmp(GET('/lm/1')->code != 429 ? 1 : 0, 1, '/lm/1 admitted (1 of 2)');
ok t_cmp(GET('/lm/22')->code != 429 ? 1 : 0, 1, '/lm/22 admitted (2 of 2)');
{
    my $res = GET '/lm/3';
    ok t_cmp($res->code, 429, '/lm/3 rejected: one counter for the LocationMatch');
    ok t_cmp($res->header('RateLimit-Policy'), '"2/1m";q=2;w=60', 'LocationMatch policy');
}
{
    my $res = GET '/lm/abc';
    ok t_cmp($res->code != 429 ? 1 : 0, 1, '/lm/abc does not match the regex: not limited');
    ok t_cmp(defined $res->header('RateLimit-Policy') ? 1 : 0, 0, '/lm/abc: no RateLimit headers');
}

# --- <Directory .../dirscope> ------------------------------------------------------
ok t_cmp(GET('/dirscope/')->code, 200, 'Directory: first admitted');
ok t_cmp(GET('/dirscope/b.html')->code, 200, 'Directory: second (another file) admitted');
{
    my $res = GET '/dirscope/b.html';
    ok t_cmp($res->code, 429, 'Directory: third rejected');
    ok t_cmp($res->header('RateLimit-Policy'), '"2/1m";q=2;w=60', 'Directory policy');
}

# --- <Files "hl-files-limited.txt"> ------------------------------------------------
ok t_cmp(GET('/files1/hl-files-limited.txt')->code, 200, 'Files: first admitted');
ok t_cmp(GET('/files1/hl-files-limited.txt')->code, 200, 'Files: second admitted');
ok t_cmp(GET('/files1/hl-files-limited.txt')->code, 429, 'Files: third rejected');
{
    my $res = GET '/files1/other.txt';
    ok t_cmp($res->code, 200, 'Files: another file of the directory is not limited');
    ok t_cmp(defined $res->header('RateLimit-Policy') ? 1 : 0, 0, 'Files: other file has no headers');
}

# --- .htaccess with AllowOverride Limit -----------------------------------------------
ok t_cmp(GET('/htq/')->code, 200, '.htaccess quota: first admitted');
{
    my $res = GET '/htq/';
    ok t_cmp($res->code, 200, '.htaccess quota: second admitted');
    ok t_cmp($res->header('RateLimit-Policy'), '"2/1m";q=2;w=60', '.htaccess quota: its policy');
}
ok t_cmp(GET('/htq/')->code, 429, '.htaccess quota: third rejected');
{
    my @codes = map { GET('/htq/open/')->code } 1 .. 4;
    ok t_cmp("@codes", '200 200 200 200', '.htaccess HotLimitEngine Off in a subdirectory');
}
# Two .htaccess quotas asked in turn on one keep-alive connection: each
# request is counted under its own directory's quota (a .htaccess quota
# is read per request, from the request's pool, so one request's may sit
# where the one before had another's).
{
    my $req = '';
    for my $i (1 .. 6) {
        my $dir = $i % 2 ? 'hka' : 'hkb';
        $req .= "GET /$dir/ HTTP/1.1\r\nHost: localhost\r\n"
              . ($i == 6 ? "Connection: close\r\n" : '') . "\r\n";
    }
    my @codes = (hl_raw(hl_port(), $req) // '') =~ m{^HTTP/1\.1 (\d{3})}mg;
    ok t_cmp("@codes", '200 200 200 200 429 429',
             'one connection, /hka/ /hkb/ in turn (a .htaccess quota each): 2 each');
}
{
    my $off = hl_offset(hl_error_log());
    my $res = GET '/htq-denied/';
    ok t_cmp($res->code, 500, 'HotLimitQuota where AllowOverride lacks Limit: 500');
    my @l = hl_wait_lines(hl_error_log(), $off,
                          sub { grep { /HotLimitQuota not allowed here/ } @_ }, 3);
    ok t_cmp(scalar(grep { /HotLimitQuota not allowed here/ } @l) ? 1 : 0, 1,
             'error log: HotLimitQuota not allowed here');
}

# --- what a client learns about a <Directory> / .htaccess scope ---------------------------
# The route shown for a <Directory> or .htaccess quota is the request's URL
# path, never the section's file-system path.
{
    my $docroot = Apache::Test::vars('documentroot');
    for my $path ('/dirscope/b.html', '/htq/') {
        my $res = GET $path, Accept => 'application/problem+json';
        t_debug("$path: " . $res->content);
        ok t_cmp(index($res->content, $docroot) < 0 ? 1 : 0, 1,
                 "the 429 of $path does not reveal the DocumentRoot path");
    }
}

# --- the same Location path in two virtual hosts --------------------------------------
# Each virtual host counts its own sections: the same <Location /vhsep> in two
# vhosts are two counters (keys are prefixed "host:port" in a vhost).
Apache::TestRequest::module('hl_tpl');
ok t_cmp(GET('/vhsep/')->code, 200, 'vhost hl_tpl: /vhsep admitted (its 1/1m)');
ok t_cmp(GET('/vhsep/')->code, 429, 'vhost hl_tpl: /vhsep spent');
Apache::TestRequest::module('hl_untrusted');
{
    my $code = GET('/vhsep/')->code;
    t_debug("vhost hl_untrusted /vhsep/ after hl_tpl spent its own: $code");
    ok t_cmp($code, 200, 'another vhost\'s <Location /vhsep> has its own counter');
}
Apache::TestRequest::module('default');
