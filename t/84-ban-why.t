# Issue 27 items 1 and 5: metrics count a refusal once, and bans say why.
#  - Two HotLimitQuota lines in one scope (/two 5/1m and /two#2 1/1m): a
#    request the 1/1m line refuses is counted once, as that line's
#    rejection, not as the 5/1m line's.
#  - A request refused because its client is banned is counted as
#    decision="banned" (once, on the request's first route), never as a
#    rule's rejection.
#  - Each ban names its HotLimitBan line (FILE:LINE), the rule whose
#    refusals started it (FILE:LINE), since when, and the refusals made
#    while banned; the list is newest first (HTML and ?json); a count of
#    bans since start (?json bans_total, hotlimit_bans_total); "lift all"
#    is a POST refused cross-site like reset.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(sleep);
use HotLimitTable ();

plan tests => 20, need_module('remoteip');

my $mpm = HotLimitTable::hl_mpm();
my $h = HotLimitTable::start_httpd(name => 'banwhy', conf => <<'CONF');
RemoteIPHeader X-Forwarded-For
RemoteIPTrustedProxy 127.0.0.1
HotLimitBan 2/1m 1h
<Location /two>
    HotLimitQuota 5/1m
    HotLimitQuota 1/1m
</Location>
CONF

# The FILE:LINE of each directive in the generated configuration.
my %line;
{
    open my $fh, '<', $h->{conf_file} or die "$h->{conf_file}: $!";
    while (<$fh>) {
        $line{ban} = "$h->{conf_file}:$." if /^HotLimitBan /;
        $line{five} = "$h->{conf_file}:$." if /HotLimitQuota 5\/1m/;
        $line{one} = "$h->{conf_file}:$." if /HotLimitQuota 1\/1m/;
    }
}

sub as { my ($ip, $path) = @_; $h->get($path, 'X-Forwarded-For' => $ip)->code }
sub metric {
    my ($m, $route, $d) = @_;
    my ($n) = $m =~ /^hotlimit_requests_total\{route="\Q$route\E",decision="$d"\} (\d+)$/m;
    return $n // 0;
}

# Client A: 1 admitted, 2 refusals by the 1/1m line start its ban; then 2
# requests refused because it is banned.
ok t_cmp(join(' ', map { as('203.0.113.1', '/two/') } 1 .. 3), '200 429 429',
         "[$mpm] A: 1 admitted, 2 refused by the 1/1m line");
ok t_cmp(as('203.0.113.1', '/two/') . ' ' . as('203.0.113.1', '/elsewhere'), '429 429',
         "[$mpm] A is banned: /two and an unlimited route refused");

my $m = $h->metrics;
ok t_cmp(join(' ', map { metric($m, '/two', $_) } qw(admitted rejected banned)), '1 0 1',
         "[$mpm] ?metrics /two (5/1m): 1 admitted, 0 rejected (it refused none), 1 banned");
ok t_cmp(join(' ', map { metric($m, '/two#2', $_) } qw(admitted rejected banned)), '1 2 0',
         "[$mpm] ?metrics /two#2 (1/1m): 1 admitted, its 2 refusals counted once, no ban");
my $sum = 0;
$sum += $_ for $m =~ /^hotlimit_requests_total\{[^}]*decision="rejected"\} (\d+)$/mg;
ok t_cmp($sum, 2, "[$mpm] ?metrics: sum of rejected = the 2 refused requests");

# Client B, banned a little later.
sleep 0.05;
ok t_cmp(join(' ', map { as('203.0.113.2', '/two/') } 1 .. 3), '200 429 429',
         "[$mpm] B: 1 admitted, 2 refused");

my $j = $h->status || {};
my @bans = @{ $j->{bans} || [] };
ok t_cmp(join(' ', map { $_->{client} } @bans), '203.0.113.2 203.0.113.1',
         "[$mpm] ?json bans: newest first");
my ($b, $a) = @bans;
ok t_cmp($a ? "$a->{line} $a->{rule}" : '', "$line{ban} $line{one}",
         "[$mpm] ?json: A's ban names its HotLimitBan line and the rule that refused");
ok t_cmp($a && $b && $b->{since_ms} >= $a->{since_ms} && $a->{since_ms} > 1e12 ? 1 : 0, 1,
         "[$mpm] ?json: since_ms, wall clock, B's not before A's");
ok t_cmp($a ? $a->{refusals} : -1, 2, "[$mpm] ?json: A refused twice while banned");
ok t_cmp($b ? $b->{refusals} : -1, 0, "[$mpm] ?json: B not refused while banned yet");
ok t_cmp($j->{bans_total} // -1, 2, "[$mpm] ?json: bans_total 2");
my ($row) = grep { ($_->{rule} // '') eq $line{five} } @{ $j->{routes} || [] };
ok t_cmp($row ? "$row->{rejected} $row->{refused_by_other} $row->{banned}" : '', '0 4 1',
         "[$mpm] ?json route /two: 0 rejected, 4 refused by another rule, 1 banned");
my ($top) = grep { ($_->{client} // '') =~ /203\.0\.113\.1/ && $_->{key} =~ /ban\|/ }
            @{ $j->{top_refused} || [] };
ok t_cmp($top ? $top->{rule} : '', "HotLimitBan $line{ban}",
         "[$mpm] ?json top_refused: the banned client's row names the HotLimitBan line");

my $html = $h->get('/hotlimit-status')->content;
ok t_cmp($html, qr{<table id="bans">.*?<tr class="ban"><td class="client key">203\.0\.113\.2</td>.*?<tr class="ban"><td class="client key">203\.0\.113\.1</td><td class="host">all hosts</td><td class="line">HotLimitBan \Q$line{ban}\E</td><td class="rule">\Q$line{one}\E</td><td class="since" title="[^"]+">[^<]+ ago</td><td class="num">2</td>}s,
         "[$mpm] HTML: bans newest first, each with its line, rule, since and refusals");
ok t_cmp($html, qr{<p id="bans-total">2 bans started since the counters started\.</p><form id="lift-all" method="post"[^>]*><input type="hidden" name="lift" value="all">},
         "[$mpm] HTML: the count since start and a lift-all button");

# Lift all: refused cross-site, done same-site.
my $ua = $h->{ua};
my $res = $ua->post($h->url('/hotlimit-status'), [ lift => 'all' ],
                    Origin => 'http://evil.example');
ok t_cmp($res->code . ' ' . scalar(@{ ($h->status || {})->{bans} || [] }), '403 2',
         "[$mpm] lift all from another site: 403, both bans stay");
$res = $ua->post($h->url('/hotlimit-status'), [ lift => 'all' ]);
ok t_cmp($res->code . ' ' . $res->content, qr/^200 \{"lifted":2\}/,
         "[$mpm] lift all: both bans lifted");
ok t_cmp(scalar(@{ ($h->status || {})->{bans} || [] }) . ' ' . as('203.0.113.1', '/elsewhere'), '0 200',
         "[$mpm] ... none left; A is served again");
ok t_cmp($h->metrics, qr/^hotlimit_bans_total 2$/m,
         "[$mpm] ?metrics: hotlimit_bans_total 2 (bans since start, lifted or not)");
$h->stop;
