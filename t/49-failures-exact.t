# Exact count=failures|status (spec 2.1 "count="; issue 17 item 1): an
# admitted request takes its unit at admission and gives it back when its
# final status is not counted, so no more than COUNT counted requests are
# admitted in a window however many arrive at once.
#
# A login script (PHP under prefork with mod_php, a CGI otherwise) appends
# one byte to a file each time its password check runs ('w' wrong, 'r'
# right), takes 200 ms like a real password hash, and answers 401 for a
# wrong password, 200 for the right one. Against "5/1m count=failures"
# (also sliding with count=status:401, and gcra):
#  - 10 right passwords one after another are all admitted, and leave the
#    budget whole (each given back);
#  - then 200 wrong passwords sent at once over 200 connections reach the
#    password check exactly 5 times: 5 answers 401, 195 answers 429 (before
#    this change every request in flight was admitted: 10 and more checks);
#  - the budget is then spent: the next request, right or wrong, gets 429.
# The same through the Redis store (HotLimitStore, with HotLimitStoreLease
# on: a count=failures quota is never leased), where the counter in Redis
# holds 0 after the right passwords and 5 after the burst.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::INET ();
use IO::Select ();
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLRedis;
use HLTest ();

plan tests => 3 * 5 + 3 * 4 + 3 + 3;

my $mpm = HotLimitTable::hl_mpm();
my $php = HotLimitTable::hl_have_php();
my $script = $php ? 'login.php' : 'login.cgi';

my $login_php = <<'PHP';
<?php
// A login handler: one byte per password check, 200 ms like a hash.
$ok = ($_GET['password'] ?? '') === 'right';
$f = fopen(__DIR__ . '/checks.log', 'a');
flock($f, LOCK_EX);
fwrite($f, $ok ? 'r' : 'w');
fclose($f);
usleep(200000);
http_response_code($ok ? 200 : 401);
header('Content-Type: text/plain');
echo $ok ? "welcome\n" : "wrong password\n";
PHP

my $login_cgi = <<'CGI';
#!/usr/bin/perl
# A login handler: one byte per password check, 200 ms like a hash.
use strict;
use Fcntl qw(:flock);
my $ok = ($ENV{QUERY_STRING} // '') =~ /(?:^|&)password=right(?:&|$)/ ? 1 : 0;
(my $dir = $ENV{SCRIPT_FILENAME}) =~ s{/[^/]+$}{};
open my $f, '>>', "$dir/checks.log" or die "checks.log: $!";
flock $f, LOCK_EX;
print {$f} $ok ? 'r' : 'w';
close $f;
select undef, undef, undef, 0.2;
print $ok ? "Status: 200 OK\r\n" : "Status: 401 Unauthorized\r\n";
print "Content-Type: text/plain\r\n\r\n", $ok ? "welcome\n" : "wrong password\n";
CGI


my %files = (map({ ("$_/$script" => $php ? $login_php : $login_cgi) } qw(a s g)),
             'lease/index.html' => "a page\n");
my $cgi_conf = $php ? '' : hl_cgi_conf() . <<'CONF';
<Directory "@DIR@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
CONF
my $quotas = <<'CONF';
<Location /a/>
    HotLimitQuota 5/1m count=failures
</Location>
<Location /s/>
    HotLimitQuota 5/1m algo=sliding count=status:401
</Location>
<Location /g/>
    HotLimitQuota 5/1m algo=gcra count=failures
</Location>
<Location /lease/>
    HotLimitQuota 100/1m count=failures
</Location>
CONF
my $setup = sub {
    my $h = shift;
    chmod 0755, map { $h->dir . "/htdocs/$_/$script" } qw(a s g);
};

# Sends $n GET requests for $path at once, each on its own connection
# (HLTest::hl_at_once). Returns a hash reference: status => count (0: no
# answer).
sub burst {
    my ($port, $path, $n) = @_;
    return HLTest::hl_at_once($port, "GET $path HTTP/1.0\r\nHost: localhost\r\n\r\n", $n);
}

# Returns the status of one right password on server $h, location $d,
# read until the server closes the connection: after its log phase, where
# the unit is given back (a gcra bucket gives back only the unit last
# counted, so the next attempt must not be counted before this one gives
# its unit back: the order in which answers of one user come back).
sub right {
    my ($h, $d) = @_;
    my $res = HLTest::hl_raw($h->port, "GET /$d/$script?password=right HTTP/1.0\r\n"
                             . "Host: localhost\r\n\r\n");
    my ($code) = ($res // '') =~ m{^HTTP/\d\.\d (\d{3})};
    return $code // 0;
}

# Returns "R W": the right and wrong password checks the script of
# directory $d ran so far.
sub checks {
    my ($h, $d) = @_;
    my $log = HotLimitTable::_slurp($h->dir . "/htdocs/$d/checks.log") // '';
    return ($log =~ tr/r//) . ' ' . ($log =~ tr/w//);
}

# The scenario on location $d of server $h; 5 tests.
sub scenario {
    my ($h, $d, $what) = @_;
    my $codes = join ' ', map { right($h, $d) } 1 .. 10;
    ok t_cmp($codes, join(' ', (200) x 10),
             "[$mpm] $what: 10 right passwords in a row are admitted");
    my $c = burst($h->port, "/$d/$script?password=wrong", 200);
    t_debug("$what burst: " . join(' ', map { "$_=$c->{$_}" } sort keys %$c));
    ok t_cmp(($c->{401} // 0) . ' ' . ($c->{429} // 0), '5 195',
             "[$mpm] $what: 200 wrong passwords at once: 5 answered 401, 195 refused");
    ok t_cmp(checks($h, $d), '10 5',
             "[$mpm] $what: the password check ran for 10 right and exactly 5 wrong");
    ok t_cmp($h->get("/$d/$script?password=right")->code, 429,
             "[$mpm] $what: the budget is spent: the right password waits too");
    ok t_cmp(checks($h, $d), '10 5', "[$mpm] $what: ... without reaching the check");
}

# --- the shared-memory store -------------------------------------------------
{
    my $h = HotLimitTable::start_httpd(name => 'fexact', files => \%files,
                                       conf => $cgi_conf . $quotas, setup => $setup);
    t_debug("$mpm: login handler $script");
    scenario($h, 'a', 'fixed');
    scenario($h, 's', 'sliding, count=status:401');
    scenario($h, 'g', 'gcra');
    $h->stop;
}

# --- the Redis store ---------------------------------------------------------
if (!HLRedis::available()) {
    skip('redis-server is not installed', 0) for 1 .. 3 * 4 + 3;
}
else {
    my $redis = HLRedis->new('fexact-redis')->start;
    my $rport = $redis->port;
    my $h = HotLimitTable::start_httpd(
        name => 'fexact-redis', files => \%files, setup => $setup,
        conf => "HotLimitStore redis://127.0.0.1:$rport\nHotLimitStoreLease 50\n"
                . $cgi_conf . $quotas);
    my $value = sub { $redis->cli('GET', "'hl:{hl}:d0$_[0]|127.0.0.1'") };
    # The count, and a sliding counter's previous window's (a minute may
    # have begun meanwhile).
    my $count = sub { my (undef, $c, $p) = split ' ', $value->($_[0]); ($c // 0) + ($p // 0) };
    for my $d (qw(a s g)) {
        my $codes = join ' ', map { right($h, $d) } 1 .. 10;
        ok t_cmp($codes, join(' ', (200) x 10),
                 "[$mpm] redis /$d/: 10 right passwords in a row are admitted");
        # gcra: the TAT back at (or before) now, the key deleted.
        ok t_cmp($d eq 'g' ? $value->("/$d/") : $count->("/$d/"), $d eq 'g' ? '' : 0,
                 "[$mpm] redis /$d/: ... and its counter in Redis holds nothing");
        my $c = burst($h->port, "/$d/$script?password=wrong", 200);
        t_debug("redis /$d/ burst: " . join(' ', map { "$_=$c->{$_}" } sort keys %$c));
        ok t_cmp(($c->{401} // 0) . ' ' . ($c->{429} // 0), '5 195',
                 "[$mpm] redis /$d/: 200 wrong passwords at once: 5 answered 401, 195 refused");
        ok t_cmp(checks($h, $d), '10 5',
                 "[$mpm] redis /$d/: the password check ran for exactly 5 wrong");
    }
    ok t_cmp($count->('/a/') . ' ' . $count->('/s/'), '5 5',
             "[$mpm] redis: the fixed and sliding counters in Redis hold 5");

    # A busy key under HotLimitStoreLease: never leased, each success
    # given back, the Redis counter back at 0.
    my @lease = map { $h->get('/lease/index.html')->code } 1 .. 40;
    ok t_cmp(scalar(grep { $_ == 200 } @lease), 40,
             "[$mpm] redis: 40 quick requests of one key admitted");
    sleep 0.3;
    ok t_cmp($count->('/lease/'), 0,
             "[$mpm] redis: none was leased: every unit given back (counter 0)");
    $h->stop;
    $redis->stop;
}

# --- h2c upgrades (event MPM with mod_http2) --------------------------------
# The HTTP/1.1 request that upgrades takes the unit; its HTTP/2 replay
# answers, and gives the unit back when its answer is not a failure.
if ($mpm eq 'prefork' || `curl -V 2>/dev/null` !~ /\bHTTP2\b/) {
    skip('h2c needs the event MPM (mod_http2) and curl with HTTP/2', 0) for 1 .. 3;
}
else {
    my $h = HotLimitTable::start_httpd(
        name => 'fexact-h2c', files => { 'h2f/index.html' => "a page\n" },
        conf => "Protocols h2c http/1.1\n<Location /h2f/>\n"
                . "    HotLimitQuota 2/1m count=failures\n    FallbackResource disabled\n</Location>\n");
    my $get = sub {
        my $out = `curl --http2 -s -o /dev/null -w '%{http_code} %{http_version}' '${\ $h->url($_[0])}' 2>/dev/null`;
        t_debug("curl --http2 $_[0]: $out");
        return $out;
    };
    my @ok = map { $get->('/h2f/') } 1 .. 4;
    ok t_cmp(join(' ', @ok), '200 2 200 2 200 2 200 2',
             "[$mpm] h2c: 4 upgrades answered 200 over HTTP/2 by 2/1m count=failures");
    ok t_cmp(join(' ', map { (split ' ', $get->('/h2f/missing'))[0] } 1 .. 2), '404 404',
             "[$mpm] h2c: ... each gave its unit back: 2 failures still admitted");
    ok t_cmp((split ' ', $get->('/h2f/'))[0], 429, "[$mpm] h2c: then the budget is spent");
    $h->stop;
}
