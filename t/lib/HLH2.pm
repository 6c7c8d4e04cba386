package HLH2;
# A minimal HTTP/2 client over cleartext (h2c) for the Apache::Test files,
# written so that a test controls exactly what travels on one connection.
#
# Why not curl -Z: on a connection upgraded to h2c, httpd 2.4 with
# mod_http2 2.0 (Debian 12) answers any input that arrives after the
# session has answered stream 1 and gone idle (a late client preface, a
# new stream) with GOAWAY(last_stream=1, "timeout") and closes: those
# streams are never processed. curl sends its preface and its further
# transfers after the 101, so what is counted depends on timing (a loaded
# machine loses the race), and curl 7.88 fails such a transfer ("000",
# "Error in the HTTP2 framing layer") instead of retrying it. With
# --http2-prior-knowledge, curl 7.88 fails every transfer that reuses a
# connection (curl issue 10634, fixed in 8.0).
#
# The client here sends everything in one write: HTTP/1.1 requests (the
# last may ask for the h2c upgrade), the client preface, then the HEADERS
# of its streams. httpd reads pipelined input before the session could go
# idle, so every stream is processed. It then reads until every stream it
# waits for has ended.
#
# Header blocks are decoded just far enough for :status: the client sets
# SETTINGS_HEADER_TABLE_SIZE to 0, so the server's encoder never refers to
# its dynamic table.
use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IO::Socket::INET ();
use IO::Select ();
use MIME::Base64 ();
use Time::HiRes qw(time);

our @EXPORT = qw(h2_upgrade_request h2_preface h2_get h2_talk);

# SETTINGS payload: HEADER_TABLE_SIZE 0, ENABLE_PUSH 0.
my $SETTINGS = pack('nN nN', 1, 0, 2, 0);

# Returns one frame: type, flags, stream id and payload, as bytes.
sub h2_frame {
    my ($type, $flags, $stream, $payload) = @_;
    return substr(pack('N', length $payload), 1) . pack('C C N', $type, $flags, $stream) . $payload;
}

# Returns an HTTP/1.1 GET of $path that asks for the h2c upgrade (with
# HTTP2-Settings, so mod_http2 upgrades), extra header lines in $extra.
sub h2_upgrade_request {
    my ($authority, $path, $extra) = @_;
    my $settings = MIME::Base64::encode_base64url($SETTINGS);
    return "GET $path HTTP/1.1\r\nHost: $authority\r\nUpgrade: h2c\r\n"
         . "Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: $settings\r\n"
         . ($extra // '') . "\r\n";
}

# Returns the client connection preface: the magic string, SETTINGS, and a
# connection WINDOW_UPDATE large enough for every response a test reads.
sub h2_preface {
    return "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" . h2_frame(4, 0, 0, $SETTINGS)
         . h2_frame(8, 0, 0, pack('N', 1 << 30));
}

# Returns a HEADERS frame (END_STREAM | END_HEADERS) for a GET of $path on
# stream $stream. Header values must be shorter than 127 bytes.
sub h2_get {
    my ($stream, $authority, $path, %headers) = @_;
    my $lit = sub { my ($v) = @_; die "HLH2: value too long\n" if length $v > 126; pack('C', length $v) . $v };
    # :method GET and :scheme http from the static table; :path (4) and
    # :authority (1) literal without indexing; others with literal names.
    my $block = "\x82\x86" . "\x04" . $lit->($path) . "\x01" . $lit->($authority);
    $block .= "\x00" . $lit->(lc $_) . $lit->($headers{$_}) for sort keys %headers;
    return h2_frame(1, 0x5, $stream, $block);
}

# Returns the integer at $$pos of $buf with an N-bit prefix (RFC 7541 5.1),
# advancing $$pos.
sub _hpack_int {
    my ($buf, $pos, $bits) = @_;
    my $max = (1 << $bits) - 1;
    my $v = ord(substr $buf, $$pos++, 1) & $max;
    return $v if $v < $max;
    my $shift = 0;
    while (1) {
        my $b = ord(substr $buf, $$pos++, 1);
        $v += ($b & 0x7f) << $shift;
        $shift += 7;
        last unless $b & 0x80;
    }
    return $v;
}

# Returns the digits of a Huffman-coded string that holds only digits
# (RFC 7541 Appendix B: '0'-'2' are 5 bits, '3'-'9' 6 bits), or undef.
sub _huffman_digits {
    my ($bytes) = @_;
    my $bits = unpack('B*', $bytes);
    my $out = '';
    while (length $bits) {
        return $out if length $bits < 8 && $bits !~ /0/;    # EOS padding
        my $five = oct('0b' . substr($bits, 0, 5));
        if (length $bits >= 5 && $five <= 2) { $out .= $five; substr($bits, 0, 5) = ''; next }
        return undef if length $bits < 6;
        my $six = oct('0b' . substr($bits, 0, 6));
        return undef if $six < 0x19;
        $out .= $six - 0x19 + 3;
        substr($bits, 0, 6) = '';
    }
    return $out;
}

# Returns the :status of a response header block (the server sends it
# first), or undef when the block does not start with it.
sub _status_of_block {
    my ($block) = @_;
    my $pos = 0;
    _hpack_int($block, \$pos, 5) while $pos < length $block && (ord(substr $block, $pos, 1) & 0xe0) == 0x20;
    return undef if $pos >= length $block;
    my $b = ord(substr $block, $pos, 1);
    my %static = (8 => 200, 9 => 204, 10 => 206, 11 => 304, 12 => 400, 13 => 404, 14 => 500);
    return $static{_hpack_int($block, \$pos, 7)} if $b & 0x80;
    my $index = _hpack_int($block, \$pos, ($b & 0x40) ? 6 : 4);
    return undef unless $static{$index};
    my $huffman = ord(substr $block, $pos, 1) & 0x80;
    my $len = _hpack_int($block, \$pos, 7);
    my $value = substr($block, $pos, $len);
    return $huffman ? _huffman_digits($value) : $value;
}

# Connects to 127.0.0.1:$port, sends $bytes in one write, and reads until
# every stream in @$streams has ended, the server sent GOAWAY and ended
# every stream it kept, the connection closed, or $timeout seconds (10)
# passed; from $from (a local address) if given. The bytes read start with $http1 HTTP/1.1 responses (headers and
# Content-Length body; the last one a 101 when HTTP/2 follows).
# Returns a hash reference: http1 => [status lines], streams => { id =>
# { status, body, ended, reset } }, goaway => last stream id or undef,
# error => text when the connection failed. The caller owns the result.
sub h2_talk {
    my (%a) = @_;
    my $timeout = $a{timeout} || 10;
    my %r = (http1 => [], streams => {}, goaway => undef);
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $a{port},
                                  Proto => 'tcp', Timeout => $timeout,
                                  ($a{from} ? (LocalAddr => $a{from}) : ()))
        or return { %r, error => "connect: $!" };
    binmode $s;
    $s->autoflush(1);
    print {$s} $a{send};
    my $sel = IO::Select->new($s);
    my $deadline = time + $timeout;
    my ($buf, $http1_left, %block) = ('', $a{http1} // 0);
    my $done = sub {
        my @want = grep { !($r{streams}{$_} && $r{streams}{$_}{ended}) } @{$a{streams}};
        @want = grep { $_ <= $r{goaway} } @want if defined $r{goaway};
        return !@want;
    };
    while (!$done->()) {
        my $left = $deadline - time;
        if ($left <= 0 || !$sel->can_read($left)) { $r{error} = 'timeout'; last }
        my $n = sysread($s, $buf, 65536, length $buf);
        if (!$n) { $r{error} = 'connection closed'; last }
        while ($http1_left > 0 && $buf =~ /\r\n\r\n/) {
            my $head_len = $+[0];
            my $head = substr($buf, 0, $head_len);
            my $body_len = $head =~ /^Content-Length:\s*(\d+)/mi ? $1 : 0;
            last if length $buf < $head_len + $body_len;
            push @{$r{http1}}, (split /\r\n/, $head)[0];
            substr($buf, 0, $head_len + $body_len) = '';
            $http1_left--;
        }
        next if $http1_left > 0;
        while (length $buf >= 9) {
            my ($len_hi, $len_lo, $type, $flags, $id) = unpack('C n C C N', $buf);
            my $len = ($len_hi << 16) | $len_lo;
            last if length $buf < 9 + $len;
            my $payload = substr($buf, 9, $len);
            substr($buf, 0, 9 + $len) = '';
            $id &= 0x7fffffff;
            my $st = $id ? ($r{streams}{$id} //= { body => '', ended => 0 }) : undef;
            if ($type == 0 || $type == 1) {                    # DATA, HEADERS
                if ($flags & 0x8) {                            # PADDED
                    my $pad = ord $payload;
                    $payload = substr($payload, 1, length($payload) - 1 - $pad);
                }
                if ($type == 0) {
                    $st->{body} .= $payload;
                } else {
                    $payload = substr($payload, 5) if $flags & 0x20;    # PRIORITY
                    $block{$id} = $payload;
                }
            } elsif ($type == 9) {                             # CONTINUATION
                $block{$id} .= $payload;
            } elsif ($type == 3) {                             # RST_STREAM
                $st->{reset} = unpack('N', $payload);
                $st->{ended} = 1;
            } elsif ($type == 4 && !($flags & 0x1)) {          # SETTINGS: ack
                print {$s} h2_frame(4, 0x1, 0, '');
            } elsif ($type == 6 && !($flags & 0x1)) {          # PING: answer
                print {$s} h2_frame(6, 0x1, 0, $payload);
            } elsif ($type == 7) {                             # GOAWAY
                $r{goaway} = unpack('N', $payload) & 0x7fffffff;
            }
            if (($type == 1 || $type == 9) && ($flags & 0x4)) {   # END_HEADERS
                $st->{status} //= _status_of_block(delete $block{$id});
            }
            # END_STREAM; on HEADERS it takes effect after the last CONTINUATION.
            $st->{end_after_headers} = 1 if $type == 1 && ($flags & 0x1);
            $st->{ended} = 1 if ($type == 0 && ($flags & 0x1))
                || ($type == 1 || $type == 9) && ($flags & 0x4) && $st->{end_after_headers};
        }
    }
    close $s;
    return \%r;
}

1;
