package HLConc;
# Requests that stay in flight, for the HotLimitConcurrency tests
# (t/54-concurrency.t, t/65-concurrency-redis.t).
#
# A request in flight is a POST to a static file whose body is sent only in
# part: httpd's default handler reads the whole body before answering, so
# the request stays in the handler (its slot held) until the test sends
# the rest or hangs up. It works the same under prefork and event, with no
# PHP, CGI or proxy.
use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IO::Socket::INET ();
use IO::Select ();
use Time::HiRes qw(time);

our @EXPORT = qw(hl_hold hl_finish hl_answer hl_answers);

# Opens a request to 127.0.0.1:$port$path for key $key (header X-Key), with
# the header lines @more ("Name: value"), that stays in flight: half of its
# 10-byte body is sent. Returns the socket.
sub hl_hold {
    my ($port, $path, $key, @more) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                  Proto => 'tcp', Timeout => 10)
        or die "connect: $!";
    binmode $s;
    $s->autoflush(1);
    print {$s} "POST $path HTTP/1.1\r\nHost: localhost\r\nX-Key: $key\r\n"
             . join('', map { "$_\r\n" } @more)
             . "Content-Length: 10\r\nConnection: close\r\n\r\n12345";
    return $s;
}

# Returns all that socket $s sends within $timeout s (default 10), until
# it closes.
sub _read_all {
    my ($s, $timeout) = @_;
    my $sel = IO::Select->new($s);
    my $buf = '';
    my $deadline = time + ($timeout // 10);
    while (time < $deadline && $sel->can_read($deadline - time)) {
        my $n = sysread $s, $buf, 65536, length $buf;
        last unless $n;
    }
    return $buf;
}

# Reads what socket $s answers within $timeout s (default 10); returns its
# status code (0: nothing).
sub hl_answer {
    my $buf = _read_all(@_);
    return $buf =~ m{^HTTP/1\.\d (\d{3})} ? $1 : 0;
}

# Reads every answer socket $s sends until it closes (pipelined requests);
# returns their status codes joined by spaces.
sub hl_answers {
    my $buf = _read_all(@_);
    return join ' ', $buf =~ m{^HTTP/1\.\d (\d{3})}mg;
}

# Sends the rest of held request $s's body, reads the answer and closes
# the socket; returns the status code.
sub hl_finish {
    my $s = shift;
    print {$s} "67890";
    my $code = hl_answer($s);
    close $s;
    return $code;
}

1;
