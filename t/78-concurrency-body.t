# Request bodies and the server (issue 25 items 8 and 9; spec sections 2
# and 8).
#
# HotLimitConcurrency keyed by a value the client sends (param:, json:,
# header:, cookie:) takes its slot only once the request body is in:
# bodies trickled by an attacker under alice's name (?user=alice, an
# octet-stream body the module has no other reason to read) hold no slot,
# so alice's own request gets in. The bodies are then handed on whole.
#
# HotLimitSpoolLimit: the bytes of request bodies spooled to disk at once,
# for the whole server. Held bodies over HotLimitBodyMemory fill it; the
# next body that needs spooling gets 503 with Retry-After (logged, HL02201)
# and never reaches the handler; once the held ones end, the next gets in,
# and ?json shows the spooled bytes back at 0.
#
# Held requests: sockets with a body sent in part, finished or closed by
# the test (no real-time wait). Private httpds: their counters are this
# test's alone.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use IO::Socket::INET ();
use IO::Select ();
use HotLimitTable;
use HLConc;

my $php = HotLimitTable::hl_have_php();
plan tests => 25 + ($php ? 2 : 0);

my $h = start_httpd(name => 'conc-body', conf => <<'CONF',
<Location /llm>
    HotLimitConcurrency 2 by=param:user
</Location>
<Location /hdr>
    HotLimitConcurrency 1 by=header:X-Key
</Location>
<Location /small>
    HotLimitConcurrency 1 by=header:X-Key
    HotLimitBodyLimit 1K
    HotLimitBodyOverflow path
</Location>
CONF
    files => { 'llm/f.txt' => "ok\n", 'hdr/f.txt' => "ok\n", 'small/f.txt' => "ok\n",
               'llm/len.php' => '<?php $b = file_get_contents("php://input");'
                                . ' echo strlen($b), " ", md5($b), "\n";' });

# Opens a POST of $path with header lines @more whose $len-byte body is
# sent in part ($sent bytes, 'x'): a trickled body. Returns the socket.
sub trickle {
    my ($path, $len, $sent, @more) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port,
                                  Proto => 'tcp', Timeout => 10) or die "connect: $!";
    binmode $s;
    $s->autoflush(1);
    print {$s} "POST $path HTTP/1.1\r\nHost: localhost\r\n"
             . join('', map { "$_\r\n" } @more)
             . "Content-Type: application/octet-stream\r\n"
             . "Content-Length: $len\r\nConnection: close\r\n\r\n" . ('x' x $sent);
    return $s;
}

# Returns the ?json concurrency entry of scope $route, or {}.
sub scope_of {
    my $route = shift;
    my $st = $h->status || {};
    my ($e) = grep { $_->{route} eq $route } @{ $st->{concurrency} || [] };
    return $e || {};
}

# --- trickled bodies hold no slot ----------------------------------------------
my @t = map { trickle('/llm/f.txt?user=alice', 10, 1) } 1 .. 2;
# Both are in the server (reading their bodies) before alice asks.
HotLimitTable::wait_until(sub { 0 }, 0.5);
ok t_cmp($h->get('/llm/f.txt?user=alice')->code, 200,
         'two octet-stream POSTs trickling under ?user=alice: alice\'s own request gets in');
ok t_cmp(scope_of('/llm')->{in_flight} // 0, 0, '?json: the trickling requests hold no slot');
ok t_cmp($h->get('/llm/f.txt?user=alice')->code, 200, 'and again');
print {$_} 'x' for @t;      # one byte more each: still not whole
ok t_cmp($h->get('/llm/f.txt?user=alice')->code, 200, 'still in after more trickled bytes');
ok t_cmp(join(' ', map { print {$_} 'x' x 8; hl_answer($_) } @t), '200 200',
         'once their bodies are whole, the trickled requests are answered');
close $_ for @t;
ok t_cmp(HotLimitTable::wait_until(sub { (scope_of('/llm')->{in_flight} // -1) == 0 }, 5) ? 1 : 0, 1,
         'and give their slots back');
ok t_cmp((scope_of('/llm')->{rejected} // -1), 0, 'nobody was refused for a slot');

# A header: key, a client that hangs up mid-body.
my $x = trickle('/hdr/f.txt', 100, 10, 'X-Key: K');
HotLimitTable::wait_until(sub { 0 }, 0.3);
ok t_cmp($h->get('/hdr/f.txt', 'X-Key' => 'K')->code, 200,
         'header: key, limit 1, a body trickling under K: K\'s own request gets in');
close $x;
$x = trickle('/hdr/f.txt', 100, 10, 'X-Key: K');
HotLimitTable::wait_until(sub { 0 }, 0.3);
close $x;                   # gone before its body was whole
ok t_cmp($h->codes('/hdr/f.txt', 2, 'X-Key' => 'K'), '200 200',
         'a client gone mid-body left no slot behind');

# Over HotLimitBodyLimit: the slot cannot wait for it: 413, even under
# HotLimitBodyOverflow path (the body would reach the handler unread).
my $big = trickle('/small/f.txt', 2048, 2048, 'X-Key: S');
ok t_cmp(hl_answer($big), 413, 'a body over HotLimitBodyLimit under a header: key: 413');
close $big;
ok t_cmp($h->get('/small/f.txt', 'X-Key' => 'S')->code, 200, 'a GET of the key: 200');

# The body is handed on whole and unchanged, a spooled one too (PHP,
# prefork only).
if ($php) {
    for my $len (100, 200_000) {
        my $body = join '', map { chr(($_ * 7) % 256) } 1 .. $len;
        my $res = $h->{ua}->post($h->url('/llm/len.php?user=bob'),
                                 'Content-Type' => 'application/octet-stream',
                                 Content => $body);
        require Digest::MD5;
        ok t_cmp($res->content, "$len " . Digest::MD5::md5_hex($body) . "\n",
                 "PHP reads the $len-byte body the module read whole");
    }
}

# --- HotLimitSpoolLimit ------------------------------------------------------------
my $sp = start_httpd(name => 'spool', conf => <<'CONF',
HotLimitBodyMemory 4K
HotLimitSpoolLimit 64K
<Location /up>
    HotLimitConcurrency 10 by=header:X-Key
</Location>
CONF
    files => { 'up/f.txt' => "ok\n" });

# A body of 40K: 4K in memory, 36K spooled. Held with 30K sent (26K spooled).
sub up {
    my ($sent) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $sp->port,
                                  Proto => 'tcp', Timeout => 10) or die "connect: $!";
    binmode $s;
    $s->autoflush(1);
    print {$s} "POST /up/f.txt HTTP/1.1\r\nHost: localhost\r\nX-Key: U\r\n"
             . "Content-Type: application/octet-stream\r\n"
             . "Content-Length: 40960\r\nConnection: close\r\n\r\n" . ('y' x $sent);
    return $s;
}

sub spool { my $st = $sp->status || {}; return $st->{spool} || {} }

my $soff = $sp->log_offset;
my @held = map { up(30720) } 1 .. 2;     # 2 x 26K spooled: 52K of 64K
ok t_cmp(HotLimitTable::wait_until(sub { (spool()->{bytes} // 0) == 2 * 26624 }, 5) ? 1 : 0, 1,
         '?json: two held bodies spool 2 x 26K (' . (spool()->{bytes} // 'none') . ')');
ok t_cmp(spool()->{limit} // 0, 65536, '?json: the limit, HotLimitSpoolLimit 64K');
my $third = up(40960);                    # needs 36K more: over 64K
my $answer = '';
{
    my $sel = IO::Select->new($third);
    while ($sel->can_read(5)) { last unless sysread $third, $answer, 65536, length $answer }
}
ok t_cmp($answer =~ m{^HTTP/1\.1 (\d+)} ? $1 : 0, 503, 'a third body that needs spooling beyond it: 503');
ok t_cmp($answer =~ /^Retry-After: \d+\r$/mi ? 1 : 0, 1, '... with Retry-After');
close $third;
ok t_cmp(HotLimitTable::wait_until(sub { (spool()->{bytes} // 0) == 2 * 26624 }, 5) ? 1 : 0, 1,
         'the refused body gave back what it had spooled');
ok t_cmp((spool()->{refused} // 0), 1, '?json: one body refused');
ok t_cmp($sp->wait_log(qr/HL02201: .*HotLimitSpoolLimit 65536/, $soff) ? 1 : 0, 1,
         'error log: HL02201 says the spool is full');
ok t_cmp($sp->get('/up/f.txt', 'X-Key' => 'U')->code, 200, 'a request without a body: 200');
ok t_cmp(hl_finish_big($held[0]), 200, 'a held body completes: 200');
close $held[1];                           # the other one's client goes away
ok t_cmp(HotLimitTable::wait_until(sub { (spool()->{bytes} // -1) == 0 }, 5) ? 1 : 0, 1,
         'once both ended (one answered, one abandoned): ?json spool.bytes back to 0');
my $next = up(40960);
ok t_cmp(hl_answer($next), 200, 'then the next body gets in: 200');
close $next;
ok t_cmp(HotLimitTable::wait_until(sub { (spool()->{bytes} // -1) == 0 }, 5) ? 1 : 0, 1,
         'and its spool is given back too');

# A flood of refusals writes a bounded number of lines.
@held = map { up(30720) } 1 .. 2;
HotLimitTable::wait_until(sub { (spool()->{bytes} // 0) == 2 * 26624 }, 5);
$soff = $sp->log_offset;
my @codes = map { my $s = up(40960); my $c = hl_answer($s); close $s; $c } 1 .. 10;
ok t_cmp("@codes", join(' ', ('503') x 10), 'ten more bodies over the limit: ten 503s');
my @lines = grep { /HL02201/ } $sp->log_lines($soff);
ok t_cmp(scalar(@lines) <= 2 ? 1 : 0, 1, 'at most 2 HL02201 lines for them (' . scalar(@lines) . ')');
close $_ for @held;

# Sends the rest of a held /up body, reads the answer, closes; returns the status.
sub hl_finish_big {
    my ($s) = @_;
    print {$s} 'y' x (40960 - 30720);
    my $c = hl_answer($s);
    close $s;
    return $c;
}
