#!/usr/bin/perl
# bench/body-client.pl PORT CONNS SIZE SECONDS DIR
# Opens CONNS connections to 127.0.0.1:PORT and POSTs on each an
# urlencoded body of SIZE bytes ("x=aaa...&do=login") to /app/login.html,
# all at once and slowly: SIZE - 1 bytes spread over about SECONDS
# seconds, in rounds of one piece per connection. It then holds the last
# byte: writes DIR/held and waits (at most 120 s) for DIR/go to appear;
# then sends the last bytes, reads every response and prints
# "conns=N status=CODE:COUNT ... seconds=S". Exit status 1 if a connection
# failed before its response.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);

my ($port, $conns, $size, $seconds, $dir) = @ARGV;
die "usage: $0 PORT CONNS SIZE SECONDS DIR\n" unless defined $dir;
$SIG{PIPE} = 'IGNORE';
my $tail = '&do=login';
my $piece = 65536;
my $chunk = 'a' x $piece;
my $t0 = time;

my @s;
for my $i (1 .. $conns) {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                  Proto => 'tcp', Timeout => 30)
        or die "connect 127.0.0.1:$port: $!\n";
    binmode $s;
    print {$s} "POST /app/login.html HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             . "Content-Type: application/x-www-form-urlencoded\r\n"
             . "Content-Length: $size\r\nConnection: close\r\n\r\nx=";
    push @s, { sock => $s, sent => 2 };
}

# Rounds until every connection has sent all but its last byte.
my $hold = $size - 1;
my $rounds = int(($hold - 2 - length($tail) + $piece - 1) / $piece) || 1;
my $pause = $seconds / $rounds;
my $failed = 0;
for my $r (1 .. $rounds) {
    my $start = time;
    for my $c (@s) {
        next if $c->{dead};
        my $body_end = $size - length($tail);     # where the tail starts
        my $n = $body_end - $c->{sent};
        $n = $piece if $n > $piece;
        next if $n <= 0;
        if (!defined syswrite($c->{sock}, $chunk, $n)) { $c->{dead} = 1; $failed++; next }
        $c->{sent} += $n;
    }
    my $left = $pause - (time - $start);
    sleep $left if $left > 0;
}
for my $c (@s) {
    next if $c->{dead};
    my $part = substr($tail, 0, length($tail) - 1);
    if (!defined syswrite($c->{sock}, $part)) { $c->{dead} = 1; $failed++ }
}
open my $fh, '>', "$dir/held" or die "$dir/held: $!\n";
close $fh;
my $deadline = time + 120;
sleep 0.05 until -e "$dir/go" || time > $deadline;
for my $c (@s) {
    next if $c->{dead};
    syswrite($c->{sock}, substr($tail, -1)) or do { $c->{dead} = 1; $failed++ };
}

# Responses.
my %status;
my $sel = IO::Select->new(map { $_->{sock} } grep { !$_->{dead} } @s);
my %buf;
while ($sel->count && time < $deadline + 60) {
    for my $h ($sel->can_read(5)) {
        my $r = sysread($h, $buf{$h}, 65536, length($buf{$h} // ''));
        next if $r;
        my ($code) = ($buf{$h} // '') =~ /^HTTP\/1\.\d (\d{3})/;
        $status{$code // 'none'}++;
        $sel->remove($h);
        close $h;
    }
}
$status{'none'} = $sel->count if $sel->count;
printf "conns=%d %s failed=%d seconds=%.1f\n", $conns,
    join(' ', map { "status=$_:$status{$_}" } sort keys %status), $failed, time - $t0;
exit($failed ? 1 : 0);
