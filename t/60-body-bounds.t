# Request bodies read for param: routes, bounded (issue 18, spec sections 2
# and 8): at most HotLimitBodyMemory in memory, the rest spooled to a
# temporary file removed at request end; the body is read under the input
# filters SetInputFilter names (DEFLATE) and handed on decoded, as without
# the module, also when <If> reads it; the default HotLimitBodyLimit is 8M;
# a body over the limit (Content-Length, chunked, Expect: 100-continue) or
# over LimitRequestBody gets 413 and the handler never runs, unless
# HotLimitBodyOverflow path; a banned client is refused before its body is
# read. The handler counts its runs in a file next to it.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Digest::MD5 qw(md5_hex);
use IO::Compress::Gzip qw(gzip $GzipError);
use IO::Select ();
use IO::Socket::INET ();
use Time::HiRes qw(time sleep);
use HotLimitTable;

my $php = hl_have_php();
plan tests => 39 + ($php ? 7 : 0);

my $mpm = hl_mpm();
my $mods = Apache::Test::vars('libexecdir') || '/usr/lib/apache2/modules';
my $cgi = <<'SH';
#!/bin/sh
echo run >> "$(dirname "$SCRIPT_FILENAME")/runs"
printf 'Content-Type: text/plain\n\n'
printf 'route=%s\n' "${HOTLIMIT_ROUTE:--}"
printf 'md5=%s\n' "$(md5sum | cut -c1-32)"
SH
my $doku = <<'PHP';
<?php
file_put_contents(__DIR__ . '/runs', "run\n", FILE_APPEND);
header('Content-Type: text/plain');
$in = file_get_contents('php://input');
echo "do=", $_POST['do'] ?? '-', "\n";
echo "input=", md5($in), " ", strlen($in), "\n";
echo "route=", $_SERVER['HOTLIMIT_ROUTE'] ?? '-', "\n";
PHP
my @dirs = qw(dw gz gzplain gzif tiny tinyp tinyerr ifbig mid lrb bb);
my %files = map { ("$_/doku.cgi" => $cgi, "$_/doku.php" => $doku) } @dirs;
$files{'err413.html'} = "custom 413 page\n";

my $h = start_httpd(name => 'body-bounds', table => { routes => {
        '/login' => { max => 1000, window => 60 },
    } }, files => \%files, setup => sub {
        chmod 0755, map { $_[0]->dir . "/htdocs/$_/doku.cgi" } @dirs;
    }, conf => hl_cgi_conf() . <<"CONF");
LoadModule deflate_module $mods/mod_deflate.so
Timeout 5
LogLevel info hotlimit:debug
HotLimitQuotaTable \@DIR\@/table.json
HotLimitReloadInterval 1
HotLimitBan 2/1m 30s
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Directory "\@DIR\@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
<Location /dw>
    HotLimitRouteFrom param:do
</Location>
<Location /gz>
    SetInputFilter DEFLATE
    HotLimitRouteFrom param:do
</Location>
<Location /gzplain>
    SetInputFilter DEFLATE
</Location>
<Location /gzif>
    SetInputFilter DEFLATE
    <If "hotlimit_param('do') == 'login'">
        HotLimitQuota 1/1m
    </If>
</Location>
<Location /tiny>
    HotLimitRouteFrom param:do
    HotLimitBodyLimit 1000
</Location>
<Location /tinyp>
    HotLimitRouteFrom param:do
    HotLimitBodyLimit 1000
    HotLimitBodyOverflow path
</Location>
<Location /tinyerr>
    HotLimitRouteFrom param:do
    HotLimitBodyLimit 1000
    ErrorDocument 413 /err413.html
</Location>
<Location /ifbig>
    HotLimitBodyLimit 1000
    <If "hotlimit_param('do') == 'login'">
        HotLimitQuota 100/1m
    </If>
</Location>
<Location /mid>
    HotLimitRouteFrom param:do
    HotLimitBodyLimit 100000
    HotLimitBodyOverflow path
</Location>
<Location /lrb>
    HotLimitRouteFrom param:do
    LimitRequestBody 500
</Location>
<Location /bb>
    HotLimitQuota 1/1m
</Location>
CONF

my $ua = $h->{ua};
my $form = 'application/x-www-form-urlencoded';

# POSTs $body (urlencoded) to $path; returns the HTTP::Response.
sub post {
    my ($path, $body, @headers) = @_;
    return $ua->post($h->url($path), 'Content-Type' => $form, @headers,
                     Content => $body);
}

# Sends a raw request over a fresh connection: pieces of text, a number
# (seconds to wait), or a code ref (called). Returns the whole answer.
sub raw {
    my @pieces = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port,
                                  Timeout => 20) or die "connect: $!";
    local $SIG{PIPE} = 'IGNORE';
    for my $p (@pieces) {
        if (ref $p) { $p->() }
        elsif ($p =~ /^\d+(\.\d+)?$/) { sleep $p }
        else {
            $p =~ s/^Host: x\r$/'Host: 127.0.0.1:' . $h->port . "\r"/me;
            print {$s} $p;
        }
    }
    my $got = '';
    my $sel = IO::Select->new($s);
    while ($sel->can_read(10)) {
        last unless sysread($s, $got, 65536, length $got);
    }
    close $s;
    return $got;
}

# Returns the chunked encoding of the strings given (one chunk each).
sub chunked { join('', map { sprintf("%x\r\n%s\r\n", length, $_) } @_) . "0\r\n\r\n" }

# Returns how many times the handlers under htdocs/$dir ran.
sub runs {
    open my $fh, '<', $h->dir . "/htdocs/$_[0]/runs" or return 0;
    my @l = <$fh>;
    return scalar @l;
}

# Returns the gzip of $s.
sub gz { my $out; gzip(\$_[0] => \$out) or die $GzipError; $out }

# --- SetInputFilter DEFLATE: the handler gets the decoded body.
my $plain = 'do=show&x=' . ('abc' x 100);
my $res = post('/gzplain/doku.cgi', gz($plain), 'Content-Encoding' => 'gzip');
ok t_cmp($res->content, qr/md5=\Q${\ md5_hex($plain)}\E/,
         "[$mpm] without the module, DEFLATE hands the CGI the decoded body");
$res = post('/gz/doku.cgi', gz($plain), 'Content-Encoding' => 'gzip');
ok t_cmp($res->content, qr/^route=-\nmd5=\Q${\ md5_hex($plain)}\E/,
         "[$mpm] param: route, gzip body: the CGI gets it decoded, as without the module");
$res = post('/gz/doku.cgi', gz('x=1&do=login'), 'Content-Encoding' => 'gzip');
ok t_cmp($res->header('X-HL-Route') // '-', '/login',
         "[$mpm] ... and the module read it decoded: do=login is /login");
ok t_cmp($res->content, qr/md5=\Q${\ md5_hex('x=1&do=login')}\E/, "[$mpm] ... handed on decoded");
# <If> reads the body before insert_filter adds DEFLATE.
my @c = map { post('/gzif/doku.cgi', gz('do=login&n=' . $_), 'Content-Encoding' => 'gzip') } 1 .. 2;
ok t_cmp(join(' ', map { $_->code } @c), '200 429',
         "[$mpm] <If hotlimit_param('do') == 'login'> reads a gzip body decoded: 1/1m, then 429");
ok t_cmp($c[0]->content, qr/md5=\Q${\ md5_hex('do=login&n=1')}\E/,
         "[$mpm] ... and the CGI got it decoded");
ok t_cmp(post('/gzif/doku.cgi', gz('do=show'), 'Content-Encoding' => 'gzip')->code, 200,
         "[$mpm] ... do=show is not limited");

# --- the default HotLimitBodyLimit is 8M.
my $long = 'x=' . ('a' x 65535) . '&do=login';
$res = post('/dw/doku.cgi?id=start', $long);
ok t_cmp($res->header('X-HL-Route') // '-', '/login',
         "[$mpm] a 65,546-byte body ending in &do=login is the route /login");
ok t_cmp($res->content, qr/md5=\Q${\ md5_hex($long)}\E/, "[$mpm] ... and reaches the CGI whole");

# --- a 2 MB body: spooled (HotLimitBodyMemory 64K), handed on byte for byte.
my $big = 'x=' . join('', map { chr(97 + $_ % 26) } 1 .. 2_000_000) . '&do=login';
$res = post('/dw/doku.cgi', $big);
ok t_cmp($res->header('X-HL-Route') // '-', '/login', "[$mpm] 2 MB body ending in do=login: /login");
ok t_cmp($res->content, qr/md5=\Q${\ md5_hex($big)}\E/, "[$mpm] ... the CGI got it byte for byte");
# While it arrives, the part past 64K is in a temporary file.
my $tmp = $ENV{TMPDIR} || '/tmp';

my @during;
my $got = raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            . "Content-Type: $form\r\nContent-Length: " . length($big) . "\r\n\r\n"
            . substr($big, 0, 1_500_000),
            sub { my $t = time;      # the server reads it as it comes
                  until (@during = grep { -s $_ > 1_000_000 } glob("$tmp/hotlimit-body.*")) {
                      last if time - $t > 5;
                      sleep 0.1;
                  } },
            substr($big, 1_500_000));
# At least one: a test run beside this one (a developer's) may spool too.
ok t_cmp(scalar(@during) >= 1 ? 1 : 0, 1, "[$mpm] a slow 2 MB body: a spool file of over 1 MB while it arrives");
ok t_cmp($got, qr/md5=\Q${\ md5_hex($big)}\E/, "[$mpm] ... the CGI got it byte for byte");
ok t_cmp(scalar(grep { -e $_ } @during), 0, "[$mpm] ... the spool file is gone after the request");

# --- over HotLimitBodyLimit 1000: 413, the handler never runs.
my $over = 'do=login&p=' . ('z' x 2000);
$res = post('/tiny/doku.cgi', $over);
ok t_cmp($res->code, 413, "[$mpm] a body over HotLimitBodyLimit (Content-Length): 413");
ok t_cmp(runs('tiny'), 0, "[$mpm] ... the CGI never ran");
$got = raw("POST /tiny/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
         . chunked('do=show&', 'p=' . ('q' x 600), 'r' x 600));
ok t_cmp($got, qr/\AHTTP\/1\.1 413 /, "[$mpm] a chunked body over the limit: 413");
$got = raw("POST /tiny/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         . "Content-Type: $form\r\nContent-Length: 2000\r\nExpect: 100-continue\r\n\r\n", 0.5);
ok t_cmp($got, qr/\AHTTP\/1\.1 413 /, "[$mpm] Expect: 100-continue over the limit: 413, no 100 Continue");
ok t_cmp(runs('tiny'), 0, "[$mpm] ... the CGI never ran");
ok t_cmp(post('/tiny/doku.cgi', 'do=show')->code, 200, "[$mpm] a body under the limit: 200");
ok t_cmp(runs('tiny'), 1, "[$mpm] ... the CGI ran once");
ok t_cmp(scalar(grep { /HL01101: body of 2011 bytes is over HotLimitBodyLimit 1000: refused \(413\)/ }
                $h->log_lines(0)) ? 1 : 0, 1, "[$mpm] the refusal is logged (HL01101)");

# ErrorDocument 413: the page is served (the refusal is not made again).
$res = post('/tinyerr/doku.cgi', $over);
ok t_cmp($res->code, 413, "[$mpm] over the limit with ErrorDocument 413: 413");
ok t_cmp($res->content, qr/^custom 413 page\n\z/, "[$mpm] ... with the ErrorDocument's page");
# Read by <If> (before the access checker): 413 too.
$res = post('/ifbig/doku.cgi', $over);
ok t_cmp($res->code, 413, "[$mpm] a body over the limit read by <If>: 413");
ok t_cmp(runs('ifbig'), 0, "[$mpm] ... the CGI never ran");

# HotLimitBodyOverflow path: the old fall-back to the path.
$res = post('/tinyp/doku.cgi', $over);
ok t_cmp($res->code, 200, "[$mpm] HotLimitBodyOverflow path: admitted");
ok t_cmp($res->content, qr/^route=-\nmd5=\Q${\ md5_hex($over)}\E/,
         "[$mpm] ... routed by the path, the CGI got the whole body");
$got = raw("POST /tinyp/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
         . chunked('do=login&', 'p=' . ('q' x 600), 'r' x 600));
ok t_cmp($got, qr/\AHTTP\/1\.1 200 .*md5=\Q${\ md5_hex('do=login&p=' . 'q' x 600 . 'r' x 600)}\E/s,
         "[$mpm] ... a chunked body too: read in part, handed on whole");

# ... and one over the limit and over HotLimitBodyMemory: what was read
# (64K in memory, the rest from the spool), then the rest from the client.
my @mid = map { chr(97 + $_ % 26) x 40000 } 1 .. 5;
$got = raw("POST /mid/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
         . chunked('do=login&p=', @mid));
ok t_cmp($got, qr/\AHTTP\/1\.1 200 .*route=-.*md5=\Q${\ md5_hex(join '', 'do=login&p=', @mid)}\E/s,
         "[$mpm] ... a 200 KB chunked body over a 100 KB limit: the path, handed on whole");

# LimitRequestBody 500: HTTP_IN's 413, and the handler never runs.
$res = post('/lrb/doku.cgi', 'do=show&p=' . ('z' x 1000));
ok t_cmp($res->code, 413, "[$mpm] over LimitRequestBody: 413");
$got = raw("POST /lrb/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
         . chunked('do=show&', 'p=' . ('q' x 600)));
ok t_cmp($got, qr/\AHTTP\/1\.1 413 /, "[$mpm] a chunked body over LimitRequestBody: 413");
ok t_cmp(runs('lrb'), 0, "[$mpm] ... the handler never ran");

# A multipart header over HotLimitBodyMemory: refused, not guessed.
my $cd = "--B\r\nContent-Disposition: form-data; name=\"do\""
       . join('', map { "\r\n " . ('c' x 1000) } 1 .. 70) . "\r\n\r\nlogin\r\n--B--\r\n";
$res = $ua->post($h->url('/dw/doku.cgi'), 'Content-Type' => 'multipart/form-data; boundary=B',
                 Content => $cd);
ok t_cmp($res->code, 413, "[$mpm] a 70 KB Content-Disposition (over HotLimitBodyMemory): 413");

# --- a banned client is refused before its body is read.
my @xff = ('X-Forwarded-For' => '192.0.2.50');
@c = map { $ua->get($h->url('/bb/doku.cgi'), @xff)->code } 1 .. 3;
ok t_cmp("@c", '200 429 429', "[$mpm] 192.0.2.50: 1 admitted, 2 refused: banned");
my $off = $h->log_offset;
$got = raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         . "X-Forwarded-For: 192.0.2.50\r\nContent-Type: $form\r\n"
         . "Content-Length: 100000\r\nExpect: 100-continue\r\n\r\n", 0.5);
ok t_cmp($got, qr/\AHTTP\/1\.1 429 /, "[$mpm] banned, POST with Expect: 100-continue: 429 at once");
ok t_cmp($got =~ /100 Continue/ ? 1 : 0, 0, "[$mpm] ... no 100 Continue: the body was never asked for");
ok t_cmp(scalar(grep { /HL01100: client banned: its body is not read/ } $h->log_lines($off)) ? 1 : 0, 1,
         "[$mpm] ... logged (HL01100)");
ok t_cmp(runs('dw') > 0 && post('/dw/doku.cgi', 'do=show')->code == 200 ? 1 : 0, 1,
         "[$mpm] another client is not banned");

# --- mod_php (prefork): $_POST and php://input.
if ($php) {
    $res = post('/gz/doku.php', gz($plain), 'Content-Encoding' => 'gzip');
    ok t_cmp($res->content, qr/^do=show\ninput=\Q${\ md5_hex($plain)}\E ${\ length $plain}\n/,
             "[$mpm] PHP: a gzip body under DEFLATE: \$_POST and php://input decoded");
    $res = post('/gzplain/doku.php', gz($plain), 'Content-Encoding' => 'gzip');
    ok t_cmp($res->content, qr/^do=show\ninput=\Q${\ md5_hex($plain)}\E ${\ length $plain}\n/,
             "[$mpm] PHP: ... the same as without the module");
    $res = post('/dw/doku.php', $big);
    ok t_cmp($res->content, qr/^do=login\ninput=\Q${\ md5_hex($big)}\E ${\ length $big}\nroute=\/login\n/,
             "[$mpm] PHP: a 2 MB body: \$_POST, php://input byte for byte, route /login");
    $res = post('/dw/doku.php', $long);
    ok t_cmp($res->content, qr/^do=login\n.*route=\/login\n/s,
             "[$mpm] PHP: 65,546 bytes ending in do=login: PHP and the module both see login");
    my $before = runs('lrb');
    ok t_cmp(post('/lrb/doku.php', 'do=show&p=' . ('z' x 1000))->code, 413,
             "[$mpm] PHP: over LimitRequestBody: 413");
    ok t_cmp(post('/tiny/doku.php', $over)->code, 413, "[$mpm] PHP: over HotLimitBodyLimit: 413");
    ok t_cmp(runs('lrb') - $before, 0, "[$mpm] PHP: ... and PHP never ran");
}
$h->stop;
