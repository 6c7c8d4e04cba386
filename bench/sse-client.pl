#!/usr/bin/perl
# bench/sse-client.pl PORT PATH
# Sends one GET for PATH to 127.0.0.1:PORT (HTTP/1.1, Connection: close) and
# reads the text/event-stream answer as it arrives, undoing chunked framing.
# Prints "status=S events=N ms=T1,T2,... lat=L1,L2,...": Ti is when event i
# (its closing blank line) arrived, in milliseconds after the request was
# written; Li how long it took to arrive, in milliseconds after the time its
# "id:" line names (microseconds since the epoch, written by
# bench/sse-upstream.pl; "-" when it has none).
# Exit status 1 if the status is not 200 or the type is not text/event-stream.
use strict;
use warnings;
use IO::Socket::INET;
use Time::HiRes qw(time);

my ($port, $path) = @ARGV;
die "usage: $0 PORT PATH\n" unless defined $path;
my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                              Proto => 'tcp', Timeout => 60)
    or die "connect 127.0.0.1:$port: $!\n";
binmode $s;
my $req = "GET $path HTTP/1.1\r\nHost: 127.0.0.1:$port\r\n"
        . "Accept: text/event-stream\r\nConnection: close\r\n\r\n";
my $t0 = time;
syswrite($s, $req) == length $req or die "write: $!\n";

my ($raw, $head, $chunked, $body, @ms, @lat) = ('', undef, 0, '');
# Moves what $raw holds of the body into $body (dechunked when chunked).
sub take {
    if (!$chunked) { $body .= $raw; $raw = ''; return }
    while ((my $eol = index($raw, "\r\n")) >= 0) {
        my $len = hex substr($raw, 0, $eol);
        last if length $raw < $eol + 2 + $len + 2;
        $body .= substr($raw, $eol + 2, $len);
        substr($raw, 0, $eol + 2 + $len + 2, '');
    }
}
while (1) {
    my $r = sysread($s, $raw, 65536, length $raw);
    die "read: $!\n" unless defined $r;
    last unless $r;
    my $now = time;
    if (!defined $head) {
        my $end = index($raw, "\r\n\r\n");
        next if $end < 0;
        $head = substr($raw, 0, $end + 4, '');
        $chunked = $head =~ /^Transfer-Encoding:\s*chunked/mi;
    }
    take();
    while ((my $end = index($body, "\n\n")) >= 0) {
        my $event = substr($body, 0, $end + 2, '');
        push @ms, sprintf('%.1f', 1000 * ($now - $t0));
        push @lat, $event =~ /^id: (\d+)$/m ? sprintf('%.2f', 1000 * $now - $1 / 1000) : '-';
    }
}
close $s;
my ($status) = ($head // '') =~ m{^HTTP/1\.\d (\d{3})};
$status //= 0;
my $sse = ($head // '') =~ m{^Content-Type:\s*text/event-stream}mi;
print "status=$status events=" . scalar(@ms) . " ms=" . join(',', @ms)
    . " lat=" . join(',', @lat) . "\n";
exit($status == 200 && $sse ? 0 : 1);
