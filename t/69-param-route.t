# HotLimitRouteFrom param:NAME, by=param:NAME and HotLimitBodyLimit: the
# route or key is $_REQUEST[NAME] as PHP reads it (query string and an
# urlencoded or multipart POST body, body winning; do[login]=x reads as
# "login"; values compared without case), and the body reaches the handler
# byte for byte: a CGI under every MPM, and mod_php under prefork ($_POST,
# php://input), also chunked, with Expect: 100-continue, over the limit,
# and sent slowly.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Digest::MD5 qw(md5_hex);
use IO::Select ();
use IO::Socket::INET ();
use Time::HiRes qw(time sleep);
use HotLimitTable;

my $php = hl_have_php();
plan tests => 48 + ($php ? 13 : 0);

my $mpm = hl_mpm();
my $mods = Apache::Test::vars('libexecdir') || '/usr/lib/apache2/modules';
my $cgi = <<'SH';
#!/bin/sh
printf 'Content-Type: text/plain\n\n'
printf 'route=%s\n' "${HOTLIMIT_ROUTE:--}"
printf 'md5=%s\n' "$(md5sum | cut -c1-32)"
SH
my $doku = <<'PHP';
<?php
header('Content-Type: text/plain');
$in = file_get_contents('php://input');
ksort($_POST);
echo "post=", json_encode($_POST), "\n";
echo "input=", md5($in), " ", strlen($in), "\n";
foreach ($_FILES as $k => $f)
    echo "file=$k ", md5_file($f['tmp_name']), "\n";
echo "route=", $_SERVER['HOTLIMIT_ROUTE'] ?? '-', "\n";
PHP

my $h = start_httpd(name => 'param-route', table => { routes => {
        '/login' => { max => 3, window => 60 },
    } }, files => {
        'dw/doku.cgi' => $cgi, 'small/doku.cgi' => $cgi, 'signup.cgi' => $cgi,
        'dw/doku.php' => $doku, 'small/doku.php' => $doku, 'rw/index.html' => "rw\n",
        'dwi/doku.cgi' => $cgi, 'xp/doku.cgi' => $cgi,
    }, setup => sub {
        chmod 0755, map { $_[0]->dir . "/htdocs/$_" }
            qw(dw/doku.cgi small/doku.cgi signup.cgi dwi/doku.cgi xp/doku.cgi);
    }, conf => hl_cgi_conf() . <<"CONF");
LoadModule proxy_module $mods/mod_proxy.so
LoadModule proxy_http_module $mods/mod_proxy_http.so
Timeout 5
RewriteEngine On
RewriteRule ^/px/(.*)\$ http://127.0.0.1:%{SERVER_PORT}/dw/\$1 [P]
LogLevel info hotlimit:debug
HotLimitQuotaTable \@DIR\@/table.json
HotLimitReloadInterval 1
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Directory "\@DIR\@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
<Location /dw>
    HotLimitRouteFrom param:do
</Location>
<Location /small>
    HotLimitRouteFrom param:do
    HotLimitBodyLimit 100
    HotLimitBodyOverflow path
</Location>
<Location /rw>
    HotLimitRouteFrom param:do
</Location>
<Directory "\@DIR\@/htdocs/rw">
    RewriteEngine On
    RewriteRule ^go\\.cgi\$ /dw/doku.cgi [L]
    RewriteRule ^go\\.php\$ /dw/doku.php [L]
</Directory>
<Location /dwi>
    HotLimitRouteFrom param:do
</Location>
<Directory "\@DIR\@/htdocs/dwi">
    DirectoryIndex doku.cgi
</Directory>
<Location /px>
    HotLimitRouteFrom param:do
</Location>
# hotlimit_param(): a request that carries u and p, as PHP reads them.
<Location /xp>
    <If "-n hotlimit_param('u') && -n hotlimit_param('p')">
        HotLimitQuota 3/1m
    </If>
</Location>
<Location /signup.cgi>
    HotLimitQuota 3/1m by=param:email
</Location>
CONF

my $ua = $h->{ua};
my $form = 'application/x-www-form-urlencoded';

# POSTs $body (urlencoded) to $path; returns the HTTP::Response.
sub post {
    my ($path, $body, @headers) = @_;
    my %headers = ('Content-Type' => $form, @headers);
    return $ua->post($h->url($path), %headers, Content => $body);
}

# Sends a raw request over a fresh connection: pieces of text, or a number
# (seconds to wait), or \'100' (wait for a 100 Continue first). Returns the
# whole answer and the seconds it took.
sub raw {
    my @pieces = @_;
    my $t0 = time;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port,
                                  Timeout => 20) or die "connect: $!";
    my $got = '';
    for my $p (@pieces) {
        if (ref $p) {
            my $sel = IO::Select->new($s);
            while ($got !~ /100 Continue\r\n\r\n/ && $sel->can_read(5)) {
                last unless sysread($s, $got, 4096, length $got);
            }
        } elsif ($p =~ /^\d+(\.\d+)?$/) {
            sleep $p;
        } else {
            $p =~ s/^Host: x\r$/'Host: 127.0.0.1:' . $h->port . "\r"/me;
            print {$s} $p;
        }
    }
    my $sel = IO::Select->new($s);
    while ($sel->can_read(20)) {
        last unless sysread($s, $got, 4096, length $got);
    }
    close $s;
    return ($got, time - $t0);
}

# Returns the chunked encoding of the strings given (one chunk each).
sub chunked { join('', map { sprintf("%x\r\n%s\r\n", length, $_) } @_) . "0\r\n\r\n" }

# --- DokuWiki: do=login posted to doku.php?id=start is the route /login.
my $body = 'do=login&u=me&p=secret';
my $res = post('/dw/doku.cgi?id=start', $body);
ok t_cmp($res->code, 200, "[$mpm] POST do=login admitted");
ok t_cmp($res->content, qr/^route=\/login\nmd5=\Q${\ md5_hex($body)}\E\n/,
         "[$mpm] ... route /login, the CGI got the body byte for byte");
ok t_cmp(post('/dw/doku.cgi?id=start', 'do%5Blogin%5D=Log+in&u=me')->code, 200,
         "[$mpm] do[login]=... is the same route");
ok t_cmp($h->get('/dw/doku.cgi?id=start&do=Login')->code, 200,
         "[$mpm] GET ?do=Login is the same route (no case)");
$res = post('/dw/doku.cgi?id=start', $body);
ok t_cmp($res->code, 429, "[$mpm] the 4th is refused (3/1m)");
ok t_cmp($res->content !~ /md5=/ ? 1 : 0, 1, "[$mpm] ... before the CGI ran");
ok t_cmp(post('/dw/doku.cgi?id=start', 'u=me&do[login]=1')->code, 429,
         "[$mpm] do[login] refused too");
ok t_cmp($h->get('/dw/doku.cgi?do=LOGIN')->code, 429, "[$mpm] ?do=LOGIN refused too");
ok t_cmp($h->get('/dw/doku.cgi?id=start')->code, 200,
         "[$mpm] GET doku.cgi?id=start (the path) still admitted");
ok t_cmp(post('/dw/doku.cgi?do=login', 'do=show')->code, 200,
         "[$mpm] the body wins over the query (do=show)");
ok t_cmp(post('/dw/doku.cgi', 'do=login', 'Content-Type' => 'text/plain')->code, 200,
         "[$mpm] a body PHP does not parse is no parameter");

# hotlimit_param() in <If>: requests carrying u and p, however encoded.
{
    my $u = '/xp/doku.cgi';
    my @codes = (
        $ua->get($h->url("$u?id=start"))->code,
        $ua->get($h->url("$u?id=start&u=admin&p=guess1"))->code,
        post($u, 'u=admin&%70=guess2')->code,
        $ua->post($h->url("$u?id=x"), 'Content-Type' => 'multipart/form-data; boundary=XyZ',
                  Content => "--XyZ\r\nContent-Disposition: form-data; name=\"u\"\r\n\r\nadmin\r\n"
                           . "--XyZ\r\nContent-Disposition: form-data; name=\"p\"\r\n\r\nguess3\r\n--XyZ--\r\n")->code,
        $ua->get($h->url("$u?u=admin&p=guess4"))->code,
    );
    ok t_cmp("@codes", '200 200 200 200 429',
             "[$mpm] hotlimit_param: u and p in the query, an encoded name, multipart: 3, then 429");
    ok t_cmp($ua->get($h->url("$u?id=start"))->code, 200,
             "[$mpm] hotlimit_param: a request without them is not limited");
    ok t_cmp($ua->get($h->url("$u?u=admin&p[]=x"))->code, 429,
             "[$mpm] hotlimit_param: p[]=x reads as its first key, 0: limited");
    ok t_cmp($ua->get($h->url("$u?u=admin&p="))->code, 200,
             "[$mpm] hotlimit_param: an empty p is not limited");
    ok t_cmp($ua->get($h->url("$u?u=admin&p=%00"))->code, 429,
             "[$mpm] hotlimit_param: a NUL is no empty value (it reads as %00)");
    ok t_cmp(post("$u?u=admin", 'p=x')->code, 429,
             "[$mpm] hotlimit_param: query and body together");
    ok t_cmp(post($u, 'u=x&p=&id=start')->content, qr/md5=\Q${\ md5_hex('u=x&p=&id=start')}\E/,
             "[$mpm] hotlimit_param: the body it read reaches the handler whole");
    ok t_cmp($ua->get($h->url("$u?U=admin&P=x"))->code, 200,
             "[$mpm] hotlimit_param: names are case-sensitive, as in PHP");
}

# multipart: text fields only, the body unchanged.
my $mp = "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"do.txt\"\r\n"
       . "Content-Type: text/plain\r\n\r\ndo=login\r\n"
       . "--XyZ\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZ--\r\n";
$res = $ua->post($h->url('/dw/doku.cgi'), 'Content-Type' => 'multipart/form-data; boundary=XyZ',
                 Content => $mp);
ok t_cmp($res->code, 429, "[$mpm] multipart do=login is /login: refused");
# PHP finds "BOUNDARY=" in capitals too: the body is read, do=login wins
# over the query's do=show.
$res = $ua->post($h->url('/dw/doku.cgi?do=show'), 'Content-Type' => 'multipart/form-data; BOUNDARY=XyZ',
                 Content => $mp);
ok t_cmp($res->code, 429, "[$mpm] multipart with BOUNDARY= in capitals, do=login: refused");
(my $mp_show = $mp) =~ s/\r\n\r\nlogin\r\n/\r\n\r\nshow\r\n/;
$res = $ua->post($h->url('/dw/doku.cgi'), 'Content-Type' => 'multipart/form-data; boundary=XyZ',
                 Content => $mp_show);
ok t_cmp($res->content, qr/^route=-\nmd5=\Q${\ md5_hex($mp_show)}\E\n/,
         "[$mpm] multipart do=show: admitted, the file part is no field, body unchanged");

# chunked and Expect: 100-continue, through raw connections.
my ($got) = raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
              . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
              . chunked('u=me&d', 'o=show&x=', 'y' x 50));
ok t_cmp($got, qr/\AHTTP\/1\.1 200 .*md5=\Q${\ md5_hex('u=me&do=show&x=' . 'y' x 50)}\E/s,
         "[$mpm] chunked body: admitted, the CGI got it de-chunked");
($got) = raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
           . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
           . chunked('do=log', 'in'));
ok t_cmp($got, qr/\AHTTP\/1\.1 429 /, "[$mpm] chunked do=login: refused");
($got) = raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
           . "Content-Type: $form\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n",
           \'100', 'do=show');
ok t_cmp($got, qr/\AHTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 .*md5=\Q${\ md5_hex('do=show')}\E/s,
         "[$mpm] Expect: 100-continue: 100, then the body reaches the CGI");

# HotLimitBodyLimit 100 with HotLimitBodyOverflow path: a bigger body is
# not read for the route (t/60-body-bounds.t: 413 without it).
my $big = 'do=login&pad=' . ('z' x 200);
ok t_cmp(post('/small/doku.cgi', 'do=login')->code, 429,
         "[$mpm] a small body under /small is read (do=login: refused)");
$res = post('/small/doku.cgi', $big);
ok t_cmp($res->code, 200, "[$mpm] a body over HotLimitBodyLimit: the path, admitted");
ok t_cmp($res->content, qr/md5=\Q${\ md5_hex($big)}\E/, "[$mpm] ... and the CGI got all of it");
($got) = raw("POST /small/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
           . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
           . chunked('do=login&', 'p=' . ('q' x 150), 'r' x 150));
ok t_cmp($got, qr/\AHTTP\/1\.1 200 .*md5=\Q${\ md5_hex('do=login&p=' . 'q' x 150 . 'r' x 150)}\E/s,
         "[$mpm] a chunked body over the limit: the path, and the CGI got all of it");
ok t_cmp(post('/small/doku.cgi?do=login', $big)->code, 429,
         "[$mpm] ... the query is still read");
ok t_cmp(scalar(grep { /HL00601: body of 213 bytes is over HotLimitBodyLimit 100/ } $h->log_lines(0)) ? 1 : 0, 1,
         "[$mpm] the oversize Content-Length is logged at debug (HL00601)");
ok t_cmp(scalar(grep { /HL00603: chunked body over HotLimitBodyLimit 100/ } $h->log_lines(0)) ? 1 : 0, 1,
         "[$mpm] the oversize chunked body too (HL00603)");

# An internal redirect after the body was read: the target gets it too.
$res = post('/rw/go.cgi', 'do=show&x=1');
ok t_cmp($res->content, qr/^route=-\nmd5=\Q${\ md5_hex('do=show&x=1')}\E\n/,
         "[$mpm] read at /rw/go.cgi, rewritten to doku.cgi: the CGI gets the body");
ok t_cmp(post('/rw/go.cgi', 'do=login')->code, 429, "[$mpm] ... do=login refused at /rw");

$res = post('/dwi/', 'do=show&y=2');
ok t_cmp($res->content, qr/^route=-\nmd5=\Q${\ md5_hex('do=show&y=2')}\E\n/,
         "[$mpm] POST /dwi/, DirectoryIndex doku.cgi (a fast redirect): the CGI gets the body");
ok t_cmp(post('/dwi/', 'do=login')->code, 429, "[$mpm] ... do=login refused there");

# mod_proxy: the proxied request carries the body unchanged.
$res = post('/px/doku.cgi', 'do=show&z=3');
ok t_cmp($res->content, qr/^route=-\nmd5=\Q${\ md5_hex('do=show&z=3')}\E\n/,
         "[$mpm] through mod_proxy: the backend gets the body");
($got) = raw("POST /px/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
           . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
           . chunked('do=sh', 'ow&z=', '4'));
ok t_cmp($got, qr/\AHTTP\/1\.1 200 .*md5=\Q${\ md5_hex('do=show&z=4')}\E/s,
         "[$mpm] through mod_proxy: a chunked body too");
ok t_cmp(post('/px/doku.cgi', 'do=login')->code, 429, "[$mpm] ... do=login refused at the proxy");

# by=param:email: per account, whatever the address.
my @codes = map { post('/signup.cgi', 'email=a%40example.org&pw=' . $_,
                       'X-Forwarded-For' => "192.0.2.$_")->code } 1 .. 4;
ok t_cmp("@codes", '200 200 200 429', "[$mpm] by=param:email: the 4th attempt for one email is refused, from any address");
ok t_cmp(post('/signup.cgi', 'email=b%40example.org', 'X-Forwarded-For' => '192.0.2.1')->code, 200,
         "[$mpm] another email is admitted");
ok t_cmp(post('/signup.cgi?email=a%40example.org', '')->code, 429,
         "[$mpm] the same email in the query is the same key");
ok t_cmp(post('/signup.cgi', 'email=+A%40Example.ORG+', 'X-Forwarded-For' => '192.0.2.77')->code, 429,
         "[$mpm] ... and so is its other spelling (case, spaces around)");
@codes = map { post('/signup.cgi', 'x=1', 'X-Forwarded-For' => '192.0.2.9')->code } 1 .. 4;
ok t_cmp("@codes", '200 200 200 429', "[$mpm] no email: the client address is the key");

# A slow body does not hold up other requests; a stalled one ends in Timeout.
my $pid = fork // die "fork: $!";
if (!$pid) {
    raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
      . "Content-Type: $form\r\nContent-Length: 20\r\n\r\ndo=show&", 3, 'x=0123456789');
    POSIX::_exit(0);
}
sleep 0.5;
my $t0 = time;
ok t_cmp($h->get('/dw/doku.cgi?id=start')->code, 200, "[$mpm] another request during a slow body");
ok t_cmp(time - $t0 < 2 ? 1 : 0, 1, "[$mpm] ... is answered at once");
waitpid $pid, 0;
my $took;
($got, $took) = raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  . "Content-Type: $form\r\nContent-Length: 20\r\n\r\ndo=show&", 1,
                  'x=0123456789');
ok t_cmp($got, qr/md5=\Q${\ md5_hex('do=show&x=0123456789')}\E/, "[$mpm] a body sent in two parts arrives whole");
($got, $took) = raw("POST /dw/doku.cgi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  . "Content-Type: $form\r\nContent-Length: 20\r\n\r\ndo=login");
ok t_cmp($took < 15 ? 1 : 0, 1, "[$mpm] a stalled body ends within Timeout (took "
         . sprintf('%.1f', $took) . " s)");

# --- mod_php: $_POST and php://input get the originals.
if ($php) {
    my $pb = 'do=show&a%5Bk%5D=1&b=x+y%21&e=';
    $res = post('/dw/doku.php?id=start', $pb);
    ok t_cmp($res->code, 200, "[$mpm] PHP: POST admitted");
    ok t_cmp($res->content, qr/^post=\{"a":\{"k":"1"\},"b":"x y!","do":"show","e":""\}\n/,
             "[$mpm] PHP: \$_POST as sent");
    ok t_cmp($res->content, qr/^input=\Q${\ md5_hex($pb)}\E ${\ length $pb}\n/m,
             "[$mpm] PHP: php://input byte for byte");
    ok t_cmp(post('/dw/doku.php?id=start', 'do=login')->code, 429,
             "[$mpm] PHP: do=login refused (/login used up)");
    $res = $ua->post($h->url('/dw/doku.php'), 'Content-Type' => 'multipart/form-data; boundary=XyZ',
                     Content => $mp_show);
    ok t_cmp($res->content, qr/^post=\{"do":"show"\}\n.*^file=f \Q${\ md5_hex('do=login')}\E\n/ms,
             "[$mpm] PHP: multipart \$_POST and the file part arrive");
    ($got) = raw("POST /dw/doku.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
               . chunked('u=me&d', 'o=show'));
    ok t_cmp($got, qr/post=\{"do":"show","u":"me"\}\ninput=\Q${\ md5_hex('u=me&do=show')}\E 12\n/,
             "[$mpm] PHP: a chunked body arrives whole");
    ($got) = raw("POST /dw/doku.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               . "Content-Type: $form\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n",
               \'100', 'do=show');
    ok t_cmp($got, qr/\AHTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 .*post=\{"do":"show"\}/s,
             "[$mpm] PHP: Expect: 100-continue");
    # A body cut short (the client stalls past Timeout) after 20,011 bytes:
    # PHP would parse its first 16 KiB (do=login) where the module read
    # only the query; it gets none of it.
    ($got) = raw("POST /dw/doku.php?id=start HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               . "Content-Type: $form\r\nContent-Length: 40000\r\n\r\n"
               . 'do=login&x=' . ('a' x 20000));
    ok t_cmp($got, qr/^post=\[\]\n(?:.*\n)*route=-\n/m,
             "[$mpm] PHP: a body cut short is not handed on in part (no do=login, no route)");
    $res = post('/rw/go.php', 'do=show&x=1');
    ok t_cmp($res->content, qr/^post=\{"do":"show","x":"1"\}\ninput=\Q${\ md5_hex('do=show&x=1')}\E 11\n/,
             "[$mpm] PHP: after an internal redirect, \$_POST and php://input");
    $res = post('/small/doku.php', $big);
    ok t_cmp($res->code, 200, "[$mpm] PHP: a body over the limit is admitted (the path)");
    ok t_cmp($res->content, qr/^input=\Q${\ md5_hex($big)}\E ${\ length $big}\n/m,
             "[$mpm] PHP: ... and arrives whole");
    ok t_cmp($res->content, qr/"do":"login"/, "[$mpm] PHP: ... \$_POST has do=login");
    ($got) = raw("POST /small/doku.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               . "Content-Type: $form\r\nTransfer-Encoding: chunked\r\n\r\n"
               . chunked('do=show&', 'p=' . ('q' x 150), 'r' x 150));
    ok t_cmp($got, qr/input=\Q${\ md5_hex('do=show&p=' . 'q' x 150 . 'r' x 150)}\E 310\n/,
             "[$mpm] PHP: a chunked body over the limit arrives whole");
}
$h->stop;
