# HotLimitQuota ... algo=gcra burst=N delay=N (issue 26 item 6; spec
# section 2.1): nginx limit_req's semantics, side by side with nginx
# itself (Debian's nginx-light, started here on its own loopback port):
# the same burst of 6 requests at once to `limit_req zone=z burst=3` at
# rate=2r/s and to `HotLimitQuota 2/1s algo=gcra burst=3 delay=0` gives the
# same passed / delayed / refused counts (1, 3, 2), with delays within
# 100 ms of nginx's (about 0.5, 1.0, 1.5 s). delay=2 passes 3 at once and
# holds the 4th. Held requests count toward HotLimitMaxWaiting: beyond it,
# a request that would be held is refused. A held client that goes away
# is dropped.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use IO::Socket::INET ();
use IO::Select ();
use File::Path ();
use POSIX ();
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my $nginx = (grep { -x } '/usr/sbin/nginx', map { "$_/nginx" } split /:/, $ENV{PATH} // '')[0];
plan tests => 12, need { 'nginx (nginx-light)' => $nginx };

# Sends $n requests for $path to $port at once; returns [status, seconds]
# of each, sorted by time.
sub burst {
    my ($port, $path, $n) = @_;
    my @s = map { IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                        Timeout => 5) or die "connect: $!" } 1 .. $n;
    my $t0 = time;
    print {$_} "GET $path HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" for @s;
    my (%buf, %done);
    my $sel = IO::Select->new(@s);
    while ($sel->count && time - $t0 < 10) {
        for my $s ($sel->can_read(1)) {
            my $got = sysread $s, $buf{$s}, 65536, length($buf{$s} // '');
            next if $got;
            $done{$s} = time - $t0;
            $sel->remove($s);
            close $s;
        }
    }
    return [ sort { $a->[1] <=> $b->[1] }
             map { [ ($buf{$_} // '') =~ m{^HTTP/1\.\d (\d{3})} ? $1 : 0, $done{$_} // 99 ] } @s ];
}

# Returns "passed delayed refused" counts and the delays of @$r.
sub classify {
    my $r = shift;
    my ($p, $d, $x, @delays) = (0, 0, 0);
    for (@$r) {
        if ($_->[0] == 200 && $_->[1] < 0.25) { $p++ }
        elsif ($_->[0] == 200) { $d++; push @delays, $_->[1] }
        else { $x++ }
    }
    return ("$p $d $x", @delays);
}

# nginx: the same limit, on a static file.
my $logs = Apache::Test::vars('t_logs');
my $ndir = "$logs/hl-nginx-$$";
File::Path::rmtree($ndir);
File::Path::mkpath("$ndir/www");
open my $fh, '>', "$ndir/www/index.html" or die;
print {$fh} "hello\n";
close $fh;
my $nport = HotLimitTable::free_port();
open $fh, '>', "$ndir/nginx.conf" or die;
print {$fh} <<"NGINX";
daemon off;
worker_processes 1;
pid $ndir/nginx.pid;
error_log $ndir/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $ndir/body;
    proxy_temp_path $ndir/proxy;
    fastcgi_temp_path $ndir/fastcgi;
    uwsgi_temp_path $ndir/uwsgi;
    scgi_temp_path $ndir/scgi;
    limit_req_zone \$binary_remote_addr zone=z:1m rate=2r/s;
    limit_req_status 429;
    server {
        listen 127.0.0.1:$nport;
        root $ndir/www;
        location / { limit_req zone=z burst=3; }
    }
}
NGINX
close $fh;
my $npid = fork // die "fork: $!";
if (!$npid) {
    open STDERR, '>', "$ndir/stderr";
    exec $nginx, '-e', "$ndir/error.log", '-c', "$ndir/nginx.conf", '-p', $ndir
        or POSIX::_exit(127);
}
END { kill 'TERM', $npid if $npid; }
HotLimitTable::wait_until(sub {
    IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $nport, Timeout => 1)
}, 10) or die "nginx did not start: " . (HotLimitTable::_slurp("$ndir/stderr") // '');

my $h = start_httpd(name => 'delay', conf => <<'CONF');
HotLimitMaxWaiting 8
<Location /d>
    HotLimitQuota 2/1s algo=gcra burst=3 delay=0
</Location>
<Location /d2>
    HotLimitQuota 2/1s algo=gcra burst=3 delay=2
</Location>
<Location /gone>
    HotLimitQuota 1/1s algo=gcra burst=3 delay=0
</Location>
CONF

my ($ncounts, @nd) = classify(burst($nport, '/index.html', 6));
my ($hcounts, @hd) = classify(burst($h->port, '/d', 6));
ok t_cmp($ncounts, '1 3 2', 'nginx burst=3 at 2r/s, 6 at once: 1 passed, 3 delayed, 2 refused');
ok t_cmp($hcounts, $ncounts, 'HotLimitQuota 2/1s algo=gcra burst=3 delay=0: the same counts');
for my $i (0 .. 2) {
    my ($n, $m) = ($nd[$i] // 0, $hd[$i] // 99);
    ok t_cmp(abs($n - $m) < 0.1 ? 1 : 0, 1,
             sprintf('delayed request %d: %.3f s here, %.3f s under nginx', $i + 1, $m, $n));
}
ok t_cmp(($hd[2] // 0) > 1.3 && ($hd[2] // 0) < 1.7 ? 1 : 0, 1, sprintf('... the last about 1.5 s (%.3f)', $hd[2] // 0));

my ($d2, @d2) = classify(burst($h->port, '/d2', 6));
ok t_cmp($d2, '3 1 2', 'delay=2: 3 pass at once, the 4th is held, 2 refused');
ok t_cmp(abs(($d2[0] // 0) - 0.5) < 0.1 ? 1 : 0, 1, sprintf('... held about 0.5 s (%.3f)', $d2[0] // 0));

# A held client that goes away is dropped (logged, HL02662) and its
# hold ends: it is counted no more among the held requests.
{
    my $s1 = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port) or die;
    print {$s1} "GET /gone HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    sleep 0.2;                                   # it passes; the next is held
    my $s2 = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port) or die;
    print {$s2} "GET /gone HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    sleep 0.3;
    close $s2;                                   # held 1 s: goes after 0.3
    ok t_cmp(HotLimitTable::wait_until(sub {
        (HotLimitTable::_slurp($h->error_log) // '') =~ /HL02662: .*route=\/gone/ }, 3) ? 1 : 0,
        1, 'a held client that went away is dropped (HL02662)');
    close $s1;
}

# HotLimitMaxWaiting 1: of 6 at once, 1 passes, 1 is held, the 2 the
# quota would hold beyond it are refused, and 2 over the burst.
my $w = start_httpd(name => 'delay-maxw', conf => <<'CONF');
HotLimitMaxWaiting 1
<Location /d>
    HotLimitQuota 2/1s algo=gcra burst=3 delay=0
</Location>
CONF
my $r = burst($w->port, '/d', 6);
my ($wc) = classify($r);
ok t_cmp($wc, '1 1 4', 'HotLimitMaxWaiting 1: 1 passed, 1 held, 4 refused');
ok t_cmp(join(' ', map { $_->[0] } grep { $_->[0] != 200 } @$r), '429 429 429 429', '... the refused with 429');
ok t_cmp(HotLimitTable::_slurp($w->error_log) // '', qr/HL02661: HotLimitMaxWaiting \(1\) reached/,
         '... logged (HL02661)');
