# A client cannot free its own counters by flooding other keys (issue 6,
# item 5): on a private httpd with HotLimitSlots 64, /login (3/1m by client
# address) is exhausted, then far more distinct API keys than there are
# slots are sent to other quotas (by=header, by=cookie, a JSON table rule);
# /login must stay at 429 throughout. Within one quota, a client at its limit
# keeps its counter while other clients of the same quota flood the table.
# Least filled first (issue 18, item 6): a key one short of its limit keeps
# its counter while 64 new one-request keys of its quota fill the table.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 23, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
my $FLOOD = 200;    # more than three times HotLimitSlots

my $h = start_httpd(name => 'eviction', table => { routes => {
        '/t/login' => { limits => ['3/1m'] },
        '/t/api'   => { limits => ['1000/1m'], by => 'header:X-Api-Key' },
    } }, conf => <<'CONF');
HotLimitSlots 64
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
<Location /login>
    HotLimitQuota 3/1m
</Location>
<Location /hlogin>
    HotLimitQuota 3/1m by=header:X-User
</Location>
<Location /api>
    HotLimitQuota 1000/1m by=header:X-Api-Key
</Location>
<Location /kapi>
    HotLimitQuota 5/1h by=header:X-Key
</Location>
<Location /capi>
    HotLimitQuota 1000/1m by=cookie:sid
</Location>
CONF

# Sends $FLOOD requests to $path, each with its own value of header $name
# (made by $fmt from the request number); returns how many were not 200.
sub flood {
    my ($path, $name, $fmt) = @_;
    my $bad = 0;
    for my $i (1 .. $FLOOD) {
        $bad++ unless $h->get($path, $name => sprintf($fmt, $i, $$))->code == 200;
    }
    return $bad;
}

ok t_cmp($h->codes('/login', 4), '200 200 200 429', "[$mpm] /login 3/1m: the fourth is 429");
ok t_cmp($h->codes('/t/login', 4), '200 200 200 429',
         "[$mpm] table rule /t/login 3/1m: the fourth is 429");

ok t_cmp(flood('/api', 'X-Api-Key', 'key-%d-%d'), 0,
         "[$mpm] $FLOOD requests to /api, each with its own X-Api-Key: all 200");
my $st = $h->status;
ok t_cmp($st->{slots}{used}, 64, "[$mpm] ... the table of 64 slots is full");
ok t_cmp($st->{slots}{evictions} > 0 ? 1 : 0, 1,
         "[$mpm] ... and evicting ($st->{slots}{evictions} evictions)");
ok t_cmp($st->{slots}{classes}, 4,
         "[$mpm] ... in 4 eviction classes: shared, /login, /t/login, /api");
ok t_cmp($h->metrics, qr/^hotlimit_slot_classes 4$/m, "[$mpm] metrics: hotlimit_slot_classes 4");
ok t_cmp($h->get('/login')->code, 429, "[$mpm] /login still 429 after the X-Api-Key flood");
ok t_cmp($h->get('/t/login')->code, 429, "[$mpm] /t/login still 429 after the X-Api-Key flood");

ok t_cmp(flood('/capi', 'Cookie', 'sid=s%d-%d'), 0,
         "[$mpm] $FLOOD requests to /capi, each with its own session cookie: all 200");
ok t_cmp($h->get('/login')->code, 429, "[$mpm] /login still 429 after the cookie flood");
ok t_cmp($h->get('/t/login')->code, 429, "[$mpm] /t/login still 429 after the cookie flood");

ok t_cmp(flood('/t/api', 'X-Api-Key', 'tkey-%d-%d'), 0,
         "[$mpm] $FLOOD requests to the table rule /t/api, each with its own X-Api-Key: all 200");
ok t_cmp($h->get('/login')->code, 429, "[$mpm] /login still 429 after the table-rule flood");
ok t_cmp($h->get('/t/login')->code, 429, "[$mpm] /t/login still 429 after the table-rule flood");

# Within one quota: the client at its limit is evicted last.
ok t_cmp($h->codes('/hlogin', 4, 'X-User' => 'victim'), '200 200 200 429',
         "[$mpm] /hlogin 3/1m by X-User: user 'victim' reaches 429");
ok t_cmp(flood('/hlogin', 'X-User', 'user-%d-%d'), 0,
         "[$mpm] $FLOOD other users on /hlogin, one request each: all 200");
ok t_cmp($h->get('/hlogin', 'X-User' => 'victim')->code, 429,
         "[$mpm] 'victim' still 429 after the flood of its own quota");
ok t_cmp($h->get('/login')->code, 429, "[$mpm] /login still 429 at the end");

# Least filled first: K1 makes 4 requests of 5, 64 new keys one each, then
# K1 gets exactly one more (5 of 5), not its whole quota again.
ok t_cmp($h->codes('/kapi', 4, 'X-Key' => 'K1'), '200 200 200 200',
         "[$mpm] /kapi 5/1h by X-Key: K1 makes 4 requests");
my $evictions = $h->status->{slots}{evictions};
my $admitted = 0;
for my $i (1 .. 64) {
    $admitted++ if $h->get('/kapi', 'X-Key' => "new-$i-$$")->code == 200;
}
ok t_cmp($admitted, 64, "[$mpm] 64 new keys on /kapi, one request each: all 200");
my $evicted = $h->status->{slots}{evictions} - $evictions;
ok t_cmp($evicted > 0 ? 1 : 0, 1, "[$mpm] ... in a full table: $evicted evictions");
ok t_cmp($h->codes('/kapi', 3, 'X-Key' => 'K1'), '200 429 429',
         "[$mpm] K1 again: one more, then 429 (5 admitted of 5)");
