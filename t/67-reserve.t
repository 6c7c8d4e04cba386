# reserve= on cost= quotas (spec 2.1 "reserve="; issue 19 item 1): a
# request takes its reservation at admission, and is admitted only if it
# fits in every window; after the response the reservation is settled to
# the real cost (the rest given back, or the excess charged). So requests
# in flight at once never spend more than the budget together.
#
# The upstream is a CGI that takes 1 s (like an LLM) and answers with
# X-Tokens: N (N from ?tokens=), appending one byte to runs.log each time
# it runs. On `HotLimitQuota 1000/1m cost=header:X-Tokens reserve=400`:
#  - 20 requests at once: 2 reach the upstream (2 x 400 fit in 1000, a
#    third does not), 18 are refused (before this change, measured under
#    prefork: 19 ran, 1,900 charged at a cost of 100 each);
#  - each settled at its real cost 100: the room comes back (the next one
#    is admitted with 1000 - 200 - 400 = 400 left);
#  - a cost above the reservation charges the excess; a missing cost
#    charges the reservation.
# The same burst on sliding and gcra windows. reserve=max_tokens:900 reads
# the JSON body's max_tokens (+ its length / 4). The same through the
# Redis store, where the counter holds the real costs once settled.
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

plan tests => 7 + 3 + 5 + 8;

my $mpm = HotLimitTable::hl_mpm();

my $llm_cgi = <<'CGI';
#!/usr/bin/perl
# An LLM stand-in: 1 s per answer (?sleep=MS), X-Tokens: ?tokens= (400;
# none: no header).
use strict;
use Fcntl qw(:flock);
my %q = map { split /=/, $_, 2 } split /&/, ($ENV{QUERY_STRING} // '');
my $body = '';
{ local $/; $body = <STDIN> // q(); }   # all of it: a CGI under mod_cgid that leaves a chunked body unread gets its answer reset
(my $dir = $ENV{SCRIPT_FILENAME}) =~ s{/[^/]+$}{};
open my $f, '>>', "$dir/runs.log" or die "runs.log: $!";
flock $f, LOCK_EX;
print {$f} 'x';
close $f;
select undef, undef, undef, ($q{sleep} // 1000) / 1000;
my $tokens = $q{tokens} // 400;
print "X-Tokens: $tokens\r\n" if $tokens ne 'none';
print "Content-Type: text/plain\r\n\r\n";
print "answered a body of ", length($body), " bytes\n";
CGI


my @dirs = qw(a s g m);
my %files = map { ("$_/llm.cgi" => $llm_cgi) } @dirs;
my $conf = hl_cgi_conf() . <<'CONF';
<Directory "@DIR@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
HotLimitHeaders On
<Location /a/>
    HotLimitQuota 1000/1m by=header:Authorization cost=header:X-Tokens reserve=400
</Location>
<Location /s/>
    HotLimitQuota 1000/1m by=header:Authorization algo=sliding cost=header:X-Tokens reserve=400
</Location>
<Location /g/>
    HotLimitQuota 1000/1m by=header:Authorization algo=gcra cost=header:X-Tokens reserve=400
</Location>
<Location /m/>
    HotLimitQuota 1000/1m by=header:Authorization cost=header:X-Tokens reserve=max_tokens:900
</Location>
CONF
my $setup = sub {
    my $h = shift;
    chmod 0755, map { $h->dir . "/htdocs/$_/llm.cgi" } @dirs;
};

# Sends $n copies of the request $req at once, each on its own connection
# (HLTest::hl_at_once), and waits for every answer (the settlements run
# as each request is logged). Returns "ADMITTED REFUSED".
sub burst {
    my ($port, $req, $n) = @_;
    my $count = HLTest::hl_at_once($port, $req, $n);
    sleep 0.3;
    return ($count->{200} // 0) . ' ' . ($count->{429} // 0);
}

# Returns the text of a GET of $path with API key $key.
sub get_req {
    my ($path, $key) = @_;
    return "GET $path HTTP/1.0\r\nHost: localhost\r\nAuthorization: $key\r\n\r\n";
}

# Returns the text of a POST of JSON $json to $path with API key $key.
sub post_req {
    my ($path, $key, $json) = @_;
    return "POST $path HTTP/1.0\r\nHost: localhost\r\nAuthorization: $key\r\n"
           . "Content-Type: application/json\r\nContent-Length: " . length($json)
           . "\r\n\r\n$json";
}

# Sends one request and reads its answer to the end (its settlement runs
# as it is logged). Returns "STATUS R": its status and the remaining (r=)
# its RateLimit header gave ('-' when none).
sub one {
    my ($port, $req) = @_;
    my $res = HLTest::hl_raw($port, $req, 20) // '';
    my ($code) = $res =~ m{^HTTP/\d\.\d (\d{3})};
    my ($r) = $res =~ m{^RateLimit:[^\r\n]*;r=(\d+)}mi;
    sleep 0.3;
    return ($code // 0) . ' ' . ($r // '-');
}

sub runs {
    my ($h, $d) = @_;
    my $log = HotLimitTable::_slurp($h->dir . "/htdocs/$d/runs.log") // '';
    return length $log;
}

# The reserve=400 scenario on /$d/ of server $h with key $key; 5 tests.
sub scenario {
    my ($h, $d, $key, $what) = @_;
    my $p = $h->port;
    ok t_cmp(burst($p, get_req("/$d/llm.cgi?tokens=100", $key), 20), '2 18',
             "[$mpm] $what: 20 at once reserving 400 of 1000: 2 admitted, 18 refused");
    ok t_cmp(runs($h, $d), 2, "[$mpm] $what: ... the upstream ran twice");
    ok t_cmp(one($p, get_req("/$d/llm.cgi?tokens=100&sleep=0", $key)), '200 400',
             "[$mpm] $what: each settled at 100: the next admitted with 1000-200-400 left");
    ok t_cmp(burst($p, get_req("/$d/llm.cgi?tokens=400", $key), 20), '1 19',
             "[$mpm] $what: 300 spent: of 20 more at once, 1 admitted");
    ok t_cmp(one($p, get_req("/$d/llm.cgi?sleep=0", $key)), '429 0',
             "[$mpm] $what: 700 spent: 400 more do not fit (never over 1000)");
}

# --- the shared-memory store -------------------------------------------------
{
    my $h = HotLimitTable::start_httpd(name => 'reserve', files => \%files,
                                       conf => $conf, setup => $setup);
    my $p = $h->port;
    scenario($h, 'a', 'sk-fixed', 'fixed');

    # A cost above the reservation charges the excess.
    ok t_cmp(one($p, get_req('/a/llm.cgi?tokens=700&sleep=0', 'sk-excess')), '200 600',
             "[$mpm] excess: admitted reserving 400 (600 left)");
    ok t_cmp(one($p, get_req('/a/llm.cgi?sleep=0', 'sk-excess')), '429 0',
             "[$mpm] excess: charged 700: 300 left, 400 more do not fit");

    # A missing cost charges the reservation.
    my @missing = map { one($p, get_req('/a/llm.cgi?tokens=none&sleep=0', 'sk-missing')) } 1 .. 3;
    ok t_cmp("@missing[1,2]", '200 200 429 0',
             "[$mpm] no X-Tokens: charged the 400 reserved (200 left after the second)");

    ok t_cmp(burst($p, get_req('/s/llm.cgi?tokens=100', 'sk-sliding'), 20), '2 18',
             "[$mpm] sliding: 20 at once reserving 400 of 1000: 2 admitted");
    ok t_cmp(burst($p, get_req('/g/llm.cgi?tokens=100', 'sk-gcra'), 20), '2 18',
             "[$mpm] gcra: 20 at once reserving 400 of 1000: 2 admitted");

    # reserve=max_tokens:900: max_tokens + body length / 4.
    my $body = '{"model":"m","max_tokens":300,"messages":[]}';    # 45 bytes: 311
    ok t_cmp(burst($p, post_req('/m/llm.cgi?tokens=100', 'sk-m', $body), 20), '3 17',
             "[$mpm] max_tokens: 20 at once with max_tokens 300: 3 admitted (3 x 311 <= 1000)");
    ok t_cmp(runs($h, 'm'), 3, "[$mpm] max_tokens: ... the upstream ran 3 times");
    ok t_cmp(one($p, post_req('/m/llm.cgi?tokens=100&sleep=0', 'sk-m', $body)), '200 389',
             "[$mpm] max_tokens: settled at 100 each: admitted with 1000-300-311 left");
    ok t_cmp(one($p, post_req('/m/llm.cgi?sleep=0', 'sk-m2', '{"model":"m"}')), '200 97',
             "[$mpm] max_tokens: a body without max_tokens reserves DEFAULT 900 + 3");
    my $long = '{"max_tokens":10,"prompt":"' . ('x' x 4000) . '"}';
    ok t_cmp(one($p, post_req('/m/llm.cgi?sleep=0', 'sk-m3', $long)), '429 0',
             "[$mpm] max_tokens: a 4 KB prompt reserves 10 + 1,000 and never fits 1000");
    $h->stop;
}

# --- the Redis store ---------------------------------------------------------
if (!HLRedis::available()) {
    skip('redis-server is not installed', 0) for 1 .. 8;
}
else {
    my $redis = HLRedis->new('reserve-redis')->start;
    my $rport = $redis->port;
    my $h = HotLimitTable::start_httpd(
        name => 'reserve-redis', files => \%files, setup => $setup,
        conf => "HotLimitStore redis://127.0.0.1:$rport\nHotLimitStoreLease 50\n" . $conf);
    scenario($h, 'a', 'sk-redis', 'redis');
    my ($key) = grep { m{d0/a/\|} } split /\n/, $redis->cli("--scan");
    t_debug("redis key $key");
    my (undef, $count) = split ' ', $redis->cli('GET', "'$key'");
    ok t_cmp($count, 700, "[$mpm] redis: the counter holds the real costs, 2 x 100 + 100 + 400");
    for my $d (qw(s g)) {
        ok t_cmp(burst($h->port, get_req("/$d/llm.cgi?tokens=100", 'sk-redis'), 20), '2 18',
                 "[$mpm] redis /$d/: 20 at once reserving 400 of 1000: 2 admitted");
    }
    $h->stop;
    $redis->stop;
}
