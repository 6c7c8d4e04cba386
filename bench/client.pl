#!/usr/bin/perl
# bench/client.pl PORT N PATH [xff|close|xff-close]
# Sends N GET requests one after the other on ONE keep-alive connection to
# 127.0.0.1:PORT and reads each response fully. With "xff", request i
# carries X-Forwarded-For: a distinct public IPv4 address derived from i
# (11.0.0.1, 11.0.0.2, ...), so every request is a new client key. With
# "close", each request has a connection of its own (Connection: close),
# as ab without -k. "xff-close" does both.
# Prints "requests=N ok=K other=M"; exit status 1 if any response was not 200.
use strict;
use warnings;
use IO::Socket::INET;

my ($port, $n, $path, $mode) = @ARGV;
die "usage: $0 PORT N PATH [xff|close|xff-close]\n" unless defined $path;
$mode //= '';
my $xff = $mode eq 'xff' || $mode eq 'xff-close';
my $close = $mode eq 'close' || $mode eq 'xff-close';

my ($s, $ok, $other, $buf) = (undef, 0, 0, '');

# Opens the connection requests are sent on.
sub open_connection {
    $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                               Proto => 'tcp', Timeout => 120)
        or die "connect 127.0.0.1:$port: $!\n";
    binmode $s;
    $buf = '';
}
open_connection() unless $close;

sub fill {
    my $r = sysread($s, $buf, 65536, length $buf);
    die "read: " . (defined $r ? "connection closed" : $!) . "\n" unless $r;
}

for my $i (1 .. $n) {
    my $h = '';
    if ($xff) {
        $h = sprintf("X-Forwarded-For: %d.%d.%d.%d\r\n",
                     11 + (($i >> 24) & 63), ($i >> 16) & 255, ($i >> 8) & 255, $i & 255);
    }
    open_connection() if $close;
    $h .= "Connection: close\r\n" if $close;
    my $req = "GET $path HTTP/1.1\r\nHost: 127.0.0.1:$port\r\n$h\r\n";
    my $w = syswrite($s, $req);
    die "write: $!\n" unless defined $w && $w == length $req;
    my $end;
    fill() while ($end = index($buf, "\r\n\r\n")) < 0;
    my $head = substr($buf, 0, $end + 4, '');
    my ($status) = $head =~ m{^HTTP/1\.\d (\d{3})} or die "bad response\n";
    my ($len) = $head =~ /^Content-Length:\s*(\d+)/mi;
    die "no Content-Length in response $i\n" unless defined $len;
    fill() while length $buf < $len;
    substr($buf, 0, $len, '');
    if ($status == 200) { $ok++ } else { $other++ }
    close $s if $close;
}
close $s unless $close;
print "requests=$n ok=$ok other=$other\n";
exit($other ? 1 : 0);
