# HOTLIMIT_ROUTE, HOTLIMIT_LIMIT and HOTLIMIT_REMAINING are set on every
# request of a limited route and hotlimit-limited=1 on a rejection: a
# CustomLog can log them (every MPM), and PHP sees them in $_SERVER
# (prefork + mod_php).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 12;

# --- CustomLog: /envlog 2/1m --------------------------------------------------------
{
    my $off = hl_offset(hl_access_log());
    my @codes = map { GET('/envlog/')->code } 1 .. 3;
    ok t_cmp("@codes", '200 200 429', '/envlog: 2 admitted, then 429');
    # Log lines of consecutive requests served by different workers may be
    # written out of order: put them in request order (remaining falls,
    # and the 429 came last).
    my @r = sort { $b->{rem} <=> $a->{rem} || $a->{status} <=> $b->{status} }
            hl_access_since($off, qr{^/envlog/}, 3);
    ok t_cmp(join(' ', map { $_->{rem} } @r), '1 0 0', 'CustomLog %{HOTLIMIT_REMAINING}e: 1 0 0');
    ok t_cmp(join(' ', map { $_->{route} } @r), '/envlog /envlog /envlog', 'CustomLog %{HOTLIMIT_ROUTE}e');
    ok t_cmp(join(' ', map { $_->{limit} } @r), '2 2 2', 'CustomLog %{HOTLIMIT_LIMIT}e');
    ok t_cmp(join(' ', map { $_->{limited} } @r), '- - 1',
             'CustomLog %{hotlimit-limited}e: 1 on the rejection only');
}
{
    my $off = hl_offset(hl_access_log());
    GET('/envstale/') for 1 .. 2;
    my @r = sort { $b->{rem} cmp $a->{rem} } hl_access_since($off, qr{^/envstale/}, 2);
    ok t_cmp(join(' ', map { $_->{rem} } @r), '1 0',
             'HOTLIMIT_REMAINING set before the module (SetEnvIf) is replaced by ours');
}
{
    my $off = hl_offset(hl_access_log());
    GET '/hl-free/';
    my @r = hl_access_since($off, qr{^/hl-free/}, 1);
    ok t_cmp(join(' ', map { "$_->{rem} $_->{route} $_->{limit}" } @r), '- - -',
             'an unlimited route sets none of them');
}

# --- PHP's $_SERVER: /php-env 3/1m ----------------------------------------------------
if (have_module(hl_php_module()) && have_apache_mpm('prefork')) {
    for my $i (1 .. 3) {
        my $res = GET '/php-env/';
        my $want = "HOTLIMIT_ROUTE=/php-env\nHOTLIMIT_LIMIT=3\nHOTLIMIT_REMAINING=" . (3 - $i) . "\nphp ran\n";
        ok t_cmp($res->code . "\n" . $res->content, "200\n$want", "PHP request $i sees the variables");
    }
    my $res = GET '/php-env/';
    ok t_cmp($res->code, 429, 'PHP: fourth rejected');
    ok t_cmp($res->content !~ /php ran/ ? 1 : 0, 1, 'PHP did not run for the rejected request');
}
else {
    skip 'PHP tests need mod_php and the prefork MPM' for 1 .. 5;
}
