# The algo=log pool reclaims as the slot table evicts (issue 25 item 3,
# spec 8): on a private httpd with HotLimitSlots 256 (41 log records), a
# key at 3/3 of an algo=log quota stays refused while hundreds of new keys
# flood another algo=log quota whose every key is at its limit (1/1h), or
# its own quota. On main, 50 such keys let it in again (6 of 3).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 8, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();

my $h = start_httpd(name => 'logpool', conf => <<'CONF');
HotLimitSlots 256
<Location /login>
    HotLimitQuota 3/1h algo=log by=header:X-User
</Location>
<Location /api>
    HotLimitQuota 1/1h algo=log by=header:X-Key
</Location>
CONF

# Sends $n requests to $path, each with its own value of header $name;
# returns how many were 200.
sub flood {
    my ($path, $name, $n, $tag) = @_;
    my $ok = 0;
    for my $i (1 .. $n) {
        $ok++ if $h->get($path, $name => "$tag-$i-$$")->code == 200;
    }
    return $ok;
}

ok t_cmp($h->codes('/login', 4, 'X-User' => 'alice'), '200 200 200 429',
         "[$mpm] /login 3/1h algo=log: alice's fourth is 429");
# Each flood, then alice (at 3/3) must still be refused.
for my $f (['/api', 'X-Key', 50, 'a', 'new keys on /api 1/1h algo=log (each at its limit)'],
           ['/api', 'X-Key', 400, 'b', 'more new keys on /api'],
           ['/login', 'X-User', 400, 'u', 'new users on /login itself (alice is evicted last)']) {
    my ($path, $name, $n, $tag, $what) = @$f;
    ok t_cmp(flood($path, $name, $n, $tag), $n, "[$mpm] $n $what: all 200");
    ok t_cmp($h->codes('/login', 3, 'X-User' => 'alice'), '429 429 429',
             "[$mpm] ... alice (3/3) is still refused");
}
my $st = $h->status;
ok t_cmp(($st->{slots}{evictions} // 0) > 0 ? 1 : 0, 1,
         "[$mpm] the log pool was full and evicting ("
         . ($st->{slots}{evictions} // 'none') . " evictions)");
