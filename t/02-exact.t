# Exactness under concurrency: 400 requests, 40 at a time, against a quota
# of 25/1m admit exactly 25, whichever worker (prefork child or event
# thread) serves them, and whether the handler is static or PHP.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use HLTest;

plan tests => 12;

my $port = hl_port();
my $mpm = have_apache_mpm('prefork') ? 'prefork'
        : have_apache_mpm('event') ? 'event' : 'worker';

# --- forked clients on a static page -----------------------------------------
my $off = hl_offset(hl_access_log());
my $c = hl_hammer(port => $port, path => '/exact/', total => 400, conc => 40);
ok t_cmp($c->{200} // 0, 25, 'static: exactly 25 of 400 concurrent requests admitted');
ok t_cmp($c->{429} // 0, 375, 'static: the other 375 rejected with 429');
ok t_cmp(join(',', sort grep { $_ != 200 && $_ != 429 } keys %$c), '',
         'static: no other status, no failed connection');

my @recs = hl_access_since($off, qr{^/exact/}, 400);
ok t_cmp(scalar(grep { $_->{status} == 200 } @recs), 25,
         'access log: 25 admitted requests of /exact/');
my %workers = map { ("$_->{pid}/$_->{tid}" => 1) } @recs;
my %pids = map { ($_->{pid} => 1) } @recs;
t_debug("workers: " . scalar(keys %workers) . ", processes: " . scalar(keys %pids));
my $nworkers = $mpm eq 'prefork' ? scalar(keys %pids) : scalar(keys %workers);
ok t_cmp($nworkers >= 2 ? 1 : 0, 1,
         "access log: several $mpm workers served the burst");
ok t_cmp(scalar(grep { $_->{status} == 429 && $_->{limited} eq '1' } @recs), 375,
         'access log: hotlimit-limited=1 on each of the 375 rejections');

# --- ab on another static route ----------------------------------------------
my ($complete, $non2xx, $out) = hl_ab(port => $port, path => '/xab/',
                                      total => 400, conc => 40);
if (defined $complete) {
    t_debug($out) if $non2xx != 375;
    ok t_cmp($complete, 400, 'ab: 400 requests completed');
    ok t_cmp($non2xx, 375, 'ab: exactly 375 non-2xx, so exactly 25 admitted');
}
else {
    skip 'ab (apache2-utils) is not installed' for 1 .. 2;
}

# --- a PHP page under prefork + mod_php ----------------------------------------
if ($mpm eq 'prefork' && have_module(hl_php_module())) {
    my $off2 = hl_offset(hl_access_log());
    my $p = hl_hammer(port => $port, path => '/xphp/', total => 400, conc => 40);
    ok t_cmp($p->{200} // 0, 25, 'PHP: exactly 25 of 400 concurrent requests admitted');
    ok t_cmp($p->{429} // 0, 375, 'PHP: 375 rejected');
    my @php = hl_access_since($off2, qr{^/xphp/}, 400);
    my %ppids = map { ($_->{pid} => 1) } @php;
    ok t_cmp(scalar(keys %ppids) >= 2 ? 1 : 0, 1,
             'PHP: several prefork children served the burst');
    my $res = Apache::TestRequest::GET('/xphp/');
    ok t_cmp($res->code, 429, 'PHP: the 401st request is rejected too');
}
else {
    skip 'PHP tests need mod_php and the prefork MPM' for 1 .. 4;
}
