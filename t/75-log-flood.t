# HotLimitLogRate (issue 25 item 4, issue 27's fail2ban item): a flood of
# 20,000 distinct client addresses (X-Forwarded-For through mod_remoteip),
# each refused once on a 1/1h quota, writes at most HotLimitLogRate (10)
# full HL00100 lines a second; the rest are summed into one HL02100 line
# per 10 s that accounts for every one of them. The fail2ban filter, run
# on the real log, finds the flooding address and never the address whose
# only refusals were of an account key (by=header), whose full line reads
# "rejected shared key". On main every refusal was a line, and an
# account's HL00100 line counted against its address.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(time sleep);
use HotLimitTable;

plan tests => 9, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
my $KEYS = 20000;
my $h = start_httpd(name => 'logflood', conf => <<'CONF');
<IfModule !remoteip_module>
    LoadModule remoteip_module /usr/lib/apache2/modules/mod_remoteip.so
</IfModule>
MaxKeepAliveRequests 0
RemoteIPHeader X-Forwarded-For
RemoteIPTrustedProxy 127.0.0.1
LogLevel info
<Location /ip/>
    HotLimitQuota 1/1h
</Location>
<Location /acct/>
    HotLimitQuota 1/1h by=header:X-User
</Location>
CONF

my $acct = '192.0.2.55';       # refused only on an account key
my $flooder = '203.0.113.66';  # refused on its address
ok t_cmp($h->codes('/acct/', 4, 'X-Forwarded-For' => $acct, 'X-User' => 'admin'),
         '200 429 429 429', "[$mpm] $acct: admin's account 1/1h refuses");
ok t_cmp($h->codes('/ip/', 4, 'X-Forwarded-For' => $flooder), '200 429 429 429',
         "[$mpm] $flooder: its address 1/1h refuses");

my $off = $h->log_offset;
my $t0 = time;
my $out = `python3 $FindBin::Bin/support/xff_flood.py @{[$h->port]} /ip/ $KEYS 2 4`;
my $took = time - $t0;
chomp $out;
ok t_cmp($out, "200=$KEYS 429=$KEYS",
         "[$mpm] $KEYS new addresses, 2 requests each: $KEYS refused ("
         . sprintf('%.1f', $took) . ' s)');

# Full lines of the flood, per second of their time stamps.
my @full = grep { /HL00100: rejected client=198\.18\./ } $h->log_lines($off);
my %per;
for (@full) { $per{$1}++ if /^\[\w+ \w+ \d+ (\d+:\d+:\d+)\./ }
my ($most) = sort { $b <=> $a } values %per;
ok t_cmp(($most // 0) <= 10 ? 1 : 0, 1,
         "[$mpm] at most 10 HL00100 lines a second (most: " . ($most // 0)
         . ', ' . scalar(@full) . ' in all over ' . scalar(keys %per) . ' s)');

# The summary comes with the first refusal 10 s after the first held line.
# The flooder's later refusals (summed under its key) bring it.
my $sum = HotLimitTable::wait_until(sub {
    $h->get('/ip/', 'X-Forwarded-For' => $flooder);
    my ($l) = grep { /HL02100: / } $h->log_lines($off);
    return $l;
}, 20) // '';
my ($held) = $sum =~ /HL02100: (\d+) refusals \(\d+ of new keys\) not logged in full: over HotLimitLogRate 10 a second$/;
# Every held line of the flood, and perhaps a few of the flooder's own,
# counted anew when the flood pushed its key out of the refusal log's table.
my $want = $KEYS - @full;
ok t_cmp(defined $held && $held >= $want && $held <= $want + 5 ? 1 : 0, 1,
         "[$mpm] one HL02100 line sums the $want held back (" . ($held // 'none')
         . '), naming no address: each was refused once');
my @sums = grep { /HL02100: / } $h->log_lines($off);
ok t_cmp(scalar @sums, 1, "[$mpm] ... one summary line");

my $f2b = -x '/usr/bin/fail2ban-regex' ? '/usr/bin/fail2ban-regex' : '';
my $filter = "$FindBin::Bin/../conf-examples/fail2ban/filter.d/hotlimit.conf";
if (!$f2b) {
    skip('fail2ban-regex is not installed', 0) for 1 .. 3;
}
else {
    my $res = `$f2b -v '@{[$h->error_log]}' '$filter' 2>&1`;
    my ($matched) = $res =~ /Lines: \d+ lines, \d+ ignored, (\d+) matched/;
    my $want = grep { /HL00100: rejected client=|HL01150: \d+ more refusals client=|HL02100: .* busiest client=/ }
               $h->log_lines(0);
    ok t_cmp($matched // -1, $want, "[$mpm] fail2ban matches the $want address lines");
    ok t_cmp($res =~ /^\|\s+\Q$flooder\E\s/m ? 1 : 0, 1,
             "[$mpm] fail2ban finds the flooding address $flooder");
    ok t_cmp($res =~ /^\|\s+\Q$acct\E\s/m ? 1 : 0, 0,
             "[$mpm] fail2ban never finds $acct, refused only on an account key");
}
