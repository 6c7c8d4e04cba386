# The kill switch ("enabled": false admits every request, static
# HotLimitQuota directives included, until a table says otherwise) and the
# compact remote switch {"e": true, "m": 3, "t": 60000}: a site-wide global
# bucket of m requests per t milliseconds; {"e": false} is the kill switch.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 20, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
my ($T, $F) = (JSON::PP::true(), JSON::PP::false());
sub rule { return { max => $_[0], window => $_[1] // 60 } }

# Reloads $h's table with $table and waits until it is published.
sub reload_with {
    my ($h, $table, $what) = @_;
    my $gen = $h->generation;
    write_table($h->table_path, $table);
    ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] $what published");
}

# ---- "enabled": false, with a static quota in the same instance ----------
my $h = start_httpd(name => 'killswitch',
                    table => { enabled => $T, routes => { '/t' => rule(2) } },
                    conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
HotLimitTableFailure open
<Location /static>
    HotLimitQuota 2/1m
</Location>
CONF
ok t_cmp($h->codes('/t', 3), '200 200 429', "[$mpm] table route /t limited (2/60s)");
ok t_cmp($h->codes('/static/x', 3), '200 200 429', "[$mpm] static <Location /static> 2/1m limited");

reload_with($h, { enabled => $F, routes => { '/t' => rule(2) } }, '"enabled": false');
ok t_cmp($h->codes('/t', 5), '200 200 200 200 200', "[$mpm] kill switch: /t admitted");
ok t_cmp($h->codes('/static/x', 5), '200 200 200 200 200', "[$mpm] kill switch: the static quota admits too");
ok t_cmp($h->get('/static/x')->header('X-HL-Route'), undef, "[$mpm] kill switch: the request is untouched (no HOTLIMIT_ROUTE)");
ok t_cmp($h->status->{table}{enabled} ? 1 : 0, 0, "[$mpm] status: table.enabled false");

# The table then fails (open policy): no table has said otherwise, so the
# kill switch should hold ("until a table says otherwise", spec 3).
my $off = $h->log_offset;
write_table($h->table_path, 'not json');
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5) ? 1 : 0, 1, "[$mpm] the table fails while the kill switch is on");
ok t_cmp($h->codes('/static/x', 2), '200 200',
        "[$mpm] kill switch holds through a table failure: the static quota still admits");

reload_with($h, { enabled => $T, routes => { '/t' => rule(2) } }, '"enabled": true again');
ok t_cmp($h->codes('/t', 1), '429', "[$mpm] switch back on: /t limited again (counter kept)");
ok t_cmp($h->codes('/static/x', 1), '429', "[$mpm] switch back on: the static quota limits again");
$h->stop;

# ---- the compact form: a global bucket for the whole site ----------------
$h = start_httpd(name => 'compact', table => { e => $T, m => 3, t => 60000 },
                 conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
CONF
my @got = map { $h->get($_)->code } qw(/one /two/three /index.html);
ok t_cmp("@got", '200 200 200', "[$mpm] compact 3/60000ms: 3 requests to 3 URLs admitted");
ok t_cmp($h->codes('/four', 1), '429', "[$mpm] ... the 4th (another URL again) rejected");
ok t_cmp($h->codes('/index.html', 1), '429', "[$mpm] ... and any other URL too");
ok t_cmp($h->get('/x')->header('RateLimit-Policy'), qr/"3\/1m";q=3;w=60/,
         "[$mpm] the global bucket's policy is 3 per 60 s");

reload_with($h, { e => $F }, '{"e": false}');
ok t_cmp($h->codes('/four', 4), '200 200 200 200', "[$mpm] {\"e\": false}: everything admitted");
reload_with($h, { e => $T, m => 3, t => 60000 }, '{"e": true, "m": 3, "t": 60000} again');
ok t_cmp($h->codes('/five', 1), '429', "[$mpm] compact switch back on: global bucket full again");
$h->stop;
