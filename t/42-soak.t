# Soak: a dozen clients load the server for ~20 s while the quota table
# file is rewritten every second and httpd restarts gracefully every few
# seconds (spec section 8: counters are never lost to a graceful restart,
# including the increments of old children finishing their requests, a
# table reload, or both at once). Expected: zero 5xx, zero failed
# connections, and every client admitted exactly its quota, on the
# directive quota and on the table's rule.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::INET ();
use IO::Select ();
use POSIX ();
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my $CLIENTS = 12;       # paced clients, each with its own X-Client key
my $HAMMERS = 3;        # unpaced clients that keep the server busy
my $SECONDS = $ENV{HOTLIMIT_SOAK_SECONDS} || 20;
# The paced clients send about 8 requests a second to each path, so these
# quotas run out in the middle of the run, across several restarts.
my %QUOTA = ('/gl/x' => 60, '/tb/x' => 70);

plan tests => 7 + 2 * $CLIENTS;

my $gen = 0;
sub table {
    ++$gen;
    return { routes => {
        '/tb'             => { max => $QUOTA{'/tb/x'}, window => '1h', by => 'header:X-Client' },
        "/other/g$gen"    => { max => 5, window => '1m' },
    } };
}
my $h = start_httpd(name => 'soak', table => table(), conf => <<"CONF");
HotLimitQuotaTable \@DIR\@/table.json
HotLimitReloadInterval 1
<Location /gl>
    HotLimitQuota $QUOTA{'/gl/x'}/1h by=header:X-Client
</Location>
<Location /bg>
    HotLimitQuota 1000000/1h by=header:X-Client
</Location>
CONF
my $port = $h->port;
my $log_start = $h->log_offset;

# Sends one GET and returns the status code, 0 when the connection failed.
sub one_request {
    my ($path, $client) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                  Proto => 'tcp', Timeout => 10) or return 0;
    print {$s} "GET $path HTTP/1.0\r\nHost: 127.0.0.1\r\nX-Client: c$client\r\n\r\n";
    my $sel = IO::Select->new($s);
    my $buf = '';
    my $deadline = time + 15;
    while (time < $deadline && $sel->can_read($deadline - time)) {
        my $n = sysread($s, $buf, 4096, length $buf);
        last unless $n;
    }
    close $s;
    return $buf =~ m{^HTTP/\d\.\d (\d{3})} ? $1 : 0;
}

# Each client runs in its own process and reports "path status count"
# lines, and "last PATH TIME" for its last admitted request.
my $started = time;
my $stop_at = $started + $SECONDS;
my @kids;
for my $c (1 .. $CLIENTS + $HAMMERS) {
    my $paced = $c <= $CLIENTS;
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        my (%n, %last);
        my $i = 0;
        while (time < $stop_at) {
            my $path = $paced ? ($i++ % 2 ? '/tb/x' : '/gl/x') : '/bg/x';
            my $code = one_request($path, $c);
            $n{$path}{$code}++;
            $last{$path} = time if $code == 200;
            sleep 0.06 if $paced;
        }
        for my $p (sort keys %n) {
            print {$w} "$p $_ $n{$p}{$_}\n" for sort keys %{ $n{$p} };
            print {$w} "last $p $last{$p}\n" if $last{$p};
        }
        close $w;
        POSIX::_exit(0);
    }
    close $w;
    push @kids, [$pid, $r, $paced];
}

# Meanwhile: the table every second, a graceful restart every 3 s.
my ($rewrites, @gracefuls) = (0);
my $next_graceful = time + 2;
while (time < $stop_at) {
    write_table($h->table_path, table());
    $rewrites++;
    if (time >= $next_graceful) {
        kill 'USR1', $h->pid;
        push @gracefuls, time;
        $next_graceful = time + 3;
    }
    sleep 1;
}
my $gracefuls = @gracefuls;

my (%per, %status, %last);
for my $k (@kids) {
    my ($pid, $r, $paced) = @$k;
    local $/;
    my $out = <$r> // '';
    waitpid $pid, 0;
    for (split /\n/, $out) {
        my ($a, $b, $c) = split ' ';
        if ($a eq 'last') {
            $last{$pid}{$b} = $c;
            next;
        }
        $status{$b} += $c;
        $per{$pid}{$a}{$b} += $c if $paced;
    }
}
my $total = 0;
$total += $_ for values %status;
t_debug("requests $total, statuses: " . join(', ', map { "$_=$status{$_}" } sort keys %status)
        . "; $rewrites table rewrites, $gracefuls graceful restarts");

ok t_cmp($gracefuls >= int($SECONDS / 3) - 1 ? 1 : 0, 1, "$gracefuls graceful restarts during the load");
ok t_cmp($total > 20 * $CLIENTS ? 1 : 0, 1, "$total requests sent");
ok t_cmp($status{0} // 0, 0, 'no failed connection');
ok t_cmp(scalar(grep { $_ >= 500 } keys %status), 0, 'no 5xx response');
my $n = 0;
my @admitted_until;
for my $pid (map { $_->[0] } grep { $_->[2] } @kids) {
    ++$n;
    for my $path (sort keys %QUOTA) {
        my $admitted = $per{$pid}{$path}{200} // 0;
        ok t_cmp($admitted, $QUOTA{$path}, "client $n: exactly $QUOTA{$path} admitted on $path");
        push @admitted_until, $last{$pid}{$path} // 0;
    }
}
# The quotas ran out after restarts had happened, not before the first.
my ($first_out) = sort { $a <=> $b } @admitted_until;
ok t_cmp(@gracefuls >= 2 && $first_out > $gracefuls[1] ? 1 : 0, 1,
         sprintf('admissions went on across restarts (last admission %.1f s in, '
                 . 'second restart %.1f s in)', $first_out - $started,
                 ($gracefuls[1] // 0) - $started));
my @lines = $h->log_lines($log_start);
ok t_cmp(scalar(grep { /AH02551|HL00203: created/ } @lines), 0,
         'no counter table was re-created or failed to restore');
ok t_cmp(scalar(grep { /HL00209: kept/ } @lines) >= $gracefuls - 1 ? 1 : 0, 1,
         'each restart kept the counters (HL00209)');
