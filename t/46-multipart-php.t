# HotLimitRouteFrom param:do on multipart/form-data bodies, against PHP
# itself (mod_php, prefork): the module must read $_REQUEST['do'] exactly
# as PHP's rfc1867 handler does, or a client could post a login that PHP
# runs and the module routes elsewhere. Each dodge found in PHP's reader
# (its 5,120-byte buffer cutting long lines, C-string compares, parts
# without a Content-Disposition not counted, unbounded part headers and
# boundaries, file parts whose data is skipped or left unread, names a
# file part guards, names normalized before registering) is posted once,
# then a few hundred bodies mixing them at random (fixed seed) are posted,
# and for each the module's route must be /login exactly when PHP's
# $_REQUEST['do'] is "login".
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my $RANDOM = $ENV{HL_MP_COUNT} || 500;
plan tests => 2 * 13 + 4, need { 'mod_php and the prefork MPM' => hl_have_php() };

my $mpm = hl_mpm();
my $php = <<'PHP';
<?php
header('Content-Type: text/plain');
$d = $_REQUEST['do'] ?? null;
if (is_array($d))
    $d = count($d) ? (string)array_key_first($d) : null;
echo "php=", $d === null ? '-' : addcslashes(strtolower($d), "\0..\37\\"), "\n";
echo "route=", $_SERVER['HOTLIMIT_ROUTE'] ?? '-', "\n";
PHP

my $h = start_httpd(name => 'multipart-php', table => { routes => {
        '/login' => { max => 1000000000, window => 60 },
    } }, files => { 'mp/doku.php' => $php }, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
# Bodies over 4 KiB are spooled and parsed from the file (HotLimitBodyMemory):
# the reader through the spool must agree with PHP too.
HotLimitBodyMemory 4096
<Location /mp>
    HotLimitRouteFrom param:do
    HotLimitBodyLimit 262144
    LimitRequestBody 262144
</Location>
CONF
my $ua = $h->{ua};

# Posts $body with boundary $b (and ?query); returns (php, route).
sub ask {
    my ($b, $body, $query) = @_;
    my $res = $ua->post($h->url('/mp/doku.php' . ($query ? "?$query" : '')),
                        'Content-Type' => "multipart/form-data; boundary=$b",
                        Content => $body);
    my ($p) = $res->content =~ /^php=(.*)$/m;
    my ($r) = $res->content =~ /^route=(.*)$/m;
    return ($p // "status " . $res->code, $r // '?');
}

sub field { my ($b, $name, $v) = @_;
    "--$b\r\nContent-Disposition: form-data; name=\"$name\"\r\n\r\n$v\r\n" }
sub file { my ($b, $name, $fn, $data) = @_;
    "--$b\r\nContent-Disposition: form-data; name=\"$name\"; filename=\"$fn\"\r\n"
    . "Content-Type: text/plain\r\n\r\n$data\r\n" }

my $B = 'XyZ';
my $login = field($B, 'do', 'login');
my %case = (
    'a preamble line PHP cuts at 5,120 bytes, the boundary after the cut'
        => ('p' x 5120) . "--$B\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--$B--\r\n",
    'a NUL after the boundary delimiter (PHP compares C strings)'
        => "--$B\0junk\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--$B--\r\n",
    '1,100 parts without a Content-Disposition first (PHP does not count them)'
        => ("--$B\r\nX-A: 1\r\n\r\nx\r\n" x 1100) . $login . "--$B--\r\n",
    'a Content-Disposition of 3,000 bytes'
        => "--$B\r\nContent-Disposition: form-data; x=\"" . ('y' x 3000) . "\"; name=\"do\"\r\n\r\nlogin\r\n--$B--\r\n",
    'a file part with filename="" (its data is read as lines)'
        => file($B, 'f', '', "--$B\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin") . "--$B--\r\n",
    'a file part whose name PHP refuses (its data is read as lines)'
        => file($B, 'f]x', 'a.txt', "--$B\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin") . "--$B--\r\n",
    'a file part PHP skips makes it skip every later one (skip_upload is never cleared)'
        => file($B, 'f]x', 'a.txt', 'data') . file($B, 'g', 'a.txt', "--$B\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin") . "--$B--\r\n",
    'a 21st file part (over max_file_uploads: its data is read as lines)'
        => join('', map { file($B, "f$_", 'a.txt', 'data') } 1 .. 20)
           . file($B, 'g', 'a.txt', "--$B\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin") . "--$B--\r\n",
    'do=show, a file part named do, do=login: the later field wins'
        => field($B, 'do', 'show') . file($B, 'do', 'a.txt', 'data') . $login . "--$B--\r\n",
    'a field named " do" (PHP drops leading spaces)'
        => field($B, ' do', 'login') . "--$B--\r\n",
    'MAX_FILE_SIZE cuts a long file short: the rest is read as lines'
        => field($B, 'MAX_FILE_SIZE', '1') . file($B, 'f', 'a.txt', ('z' x 10238)
           . "--$B\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin") . "--$B--\r\n",
);
for my $name (sort keys %case) {
    my ($p, $r) = ask($B, $case{$name});
    ok t_cmp($p, 'login', "[$mpm] PHP reads do=login: $name");
    ok t_cmp($r, '/login', "[$mpm] ... and so does the module");
}
# An empty boundary: PHP reads "--" lines as delimiters.
{
    my ($p, $r) = ask('', field('', 'do', 'login') . "----\r\n");
    ok t_cmp("$p $r", 'login /login', "[$mpm] an empty boundary: PHP and the module read do=login");
}
# A boundary of 300 bytes (over the old reader's 256).
{
    my $b = 'b' x 300;
    my ($p, $r) = ask($b, field($b, 'do', 'login') . "--$b--\r\n");
    ok t_cmp($p, 'login', "[$mpm] PHP reads do=login with a 300-byte boundary");
    ok t_cmp($r, '/login', "[$mpm] ... and so does the module");
}
# A boundary of 5,116 bytes, PHP's longest: its buffer grows to 5,122.
{
    my $b = 'c' x 5116;
    my ($p, $r) = ask($b, ('q' x 5300) . "\r\n" . field($b, 'do', 'login') . "--$b--\r\n");
    ok t_cmp($p, 'login', "[$mpm] PHP reads do=login with a 5,116-byte boundary");
    ok t_cmp($r, '/login', "[$mpm] ... and so does the module");
    # One byte more: PHP reads no body at all ("Boundary too large").
    $b .= 'c';
    ($p, $r) = ask($b, field($b, 'do', 'login') . "--$b--\r\n", 'do=show');
    ok t_cmp("$p $r", 'show -', "[$mpm] a 5,117-byte boundary: PHP and the module read the query alone");
}
# do[ login]: PHP keeps the space in the key (" login"): no login.
{
    my ($p, $r) = ask($B, field($B, 'do[ login]', 'x') . "--$B--\r\n");
    ok t_cmp("$p $r", ' login -', "[$mpm] do[ login]: PHP's key keeps its space, the module routes no /login");
}

# ---- bodies mixing the above at random, fixed seed -----------------------
srand($ENV{HL_MP_SEED} || 46);
sub pick { $_[int rand @_] }
sub random_body {
    my ($b) = @_;
    my $eol = rand() < 0.8 ? "\r\n" : "\n";
    my $body = '';
    my $r = rand();
    $body .= 'x' x (5120 - 3 + int rand 7) if $r < 0.15;
    $body .= "preamble$eol" if $r >= 0.15 && $r < 0.3;
    for (1 .. 1 + int rand 6) {
        my $delim = pick("--$b", "--$b", "--$b", "--$b\0z", "--$b ", "--${b}x");
        my $k = rand();
        if ($k < 0.45) {
            my $name = pick('do', 'do', 'do[login]', 'do[ login]', ' do', 'd.o', 'x', 'MAX_FILE_SIZE', 'do[]');
            my $v = pick('login', 'show', 'LOGIN', '', '1', 'login' . "\r");
            my $cd = pick("Content-Disposition: form-data; name=\"$name\"",
                          "content-disposition: form-data; name=$name",
                          "Content-Disposition: form-data;${eol} name=\"$name\"",
                          "Content-Disposition: form-data; x=\"" . ('w' x (2000 + int rand 4000)) . "\"; name=\"$name\"");
            $body .= "$delim$eol$cd$eol$eol$v$eol";
        } elsif ($k < 0.75) {
            my $name = pick('f', 'do', 'f]x', 'f[a]', 'do[login]');
            my $fn = pick('a.txt', 'a.txt', '');
            my $data = pick('data', 'z' x (5100 + int rand 40),
                            "--$b${eol}Content-Disposition: form-data; name=\"do\"$eol${eol}login",
                            "l1$eol--$b${eol}Content-Disposition: form-data; name=\"do\"$eol${eol}show");
            $body .= "$delim${eol}Content-Disposition: form-data; name=\"$name\"; filename=\"$fn\"$eol$eol$data$eol";
        } elsif ($k < 0.85) {
            $body .= "$delim${eol}X-Other: 1$eol${eol}junk$eol";
        } else {
            $body .= pick('y' x (5100 + int rand 40), "junk line") . $eol;
        }
    }
    $body .= pick("--$b--$eol", "--$b--", '', "--$b");
    return $body;
}
my @bad;
for my $i (1 .. $RANDOM) {
    my $b = pick('XyZ', 'a' x 40, 'q' x 300, '');
    my $body = random_body($b);
    my $query = rand() < 0.2 ? 'do=login' : rand() < 0.2 ? 'do=show' : undef;
    my ($p, $r) = ask($b, $body, $query);
    push @bad, "#$i php=$p route=$r" if ($p eq 'login') != ($r eq '/login');
    if (@bad && @bad == 1 && $bad[0] =~ /^#$i /) {
        open my $fh, '>', "/tmp/hl-multipart-$i.bin";
        binmode $fh;
        print $fh "boundary=$b query=" . ($query // '') . "\n$body";
        close $fh;
    }
}
ok t_cmp(scalar(@bad), 0, "[$mpm] $RANDOM random multipart bodies: the module routes /login"
         . " exactly when PHP reads do=login" . (@bad ? " (first: $bad[0])" : ''));
$h->stop;
