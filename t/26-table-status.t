# The status handler of an instance with a quota table: ?json shows the
# table's source, a generation that grows with each change, and the result
# and message of the last reload; ?metrics has the reload counters by
# result and the generation. Every table route is listed with its limits
# from the start, before any request.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 24, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();

my $h = start_httpd(name => 'status',
                    table => { routes => { '/s' => { max => 1, window => 60 } } },
                    conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
HotLimitTableFailure last-good
CONF

my $st = $h->status;
ok t_cmp($st->{table}{source}, $h->table_path, "[$mpm] ?json: table.source is the file");
ok t_cmp($st->{table}{last_result}, 'ok', "[$mpm] ?json: last_result ok after the start");
ok t_cmp($st->{table}{routes}, 1, "[$mpm] ?json: 1 route");
my $g1 = $st->{table}{generation};
ok t_cmp($h->metrics, qr/^hotlimit_table_last_reload_successful 1$/m,
         "[$mpm] ?metrics: hotlimit_table_last_reload_successful 1 after a good load");
ok t_cmp($g1 >= 1 ? 1 : 0, 1, "[$mpm] ?json: generation $g1 >= 1");

write_table($h->table_path, { routes => { '/s' => { max => 1, window => 60 },
                                          '/s2' => { max => 1, window => 60 } } });
my $g2 = $h->wait_generation($g1, 5);
ok t_cmp($g2 > $g1 ? 1 : 0, 1, "[$mpm] ?json: generation grows after a change ($g1 -> $g2)");
$st = $h->status;
ok t_cmp($st->{table}{routes}, 2, "[$mpm] ?json: 2 routes now");
my %listed = map { $_->{route} => "$_->{origin} $_->{limits} $_->{admitted}" } @{ $st->{routes} || [] };
ok t_cmp(join(', ', map { "$_: " . ($listed{$_} // 'missing') } '/s', '/s2'),
         '/s: table 1/1m by=ip 0, /s2: table 1/1m by=ip 0',
         "[$mpm] ?json: both table routes listed with their limits, never requested");
ok t_cmp(scalar(grep { ($_->{origin} // '') eq 'table' } @{ $st->{routes} || [] }), 2,
         "[$mpm] ?json: the routes of the table in force, no more");
ok t_cmp($st->{table}{message}, qr/^2 routes, 0 entries skipped$/, "[$mpm] ?json: message of the good reload");

my $off = $h->log_offset;
write_table($h->table_path, '[1, 2, 3]');
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5) ? 1 : 0, 1, "[$mpm] a table that is not an object fails (HL00404)");
$st = $h->status;
ok t_cmp($st->{table}{last_result}, 'failed', "[$mpm] ?json: last_result failed");
ok t_cmp($st->{table}{message}, 'the document is not a valid quota table',
         "[$mpm] ?json: the failure's message");
ok t_cmp($st->{table}{reloads}{failed} >= 1 ? 1 : 0, 1, "[$mpm] ?json: reloads.failed counted");
ok t_cmp($st->{table}{generation}, $g2, "[$mpm] ?json: last-good published nothing");

my $m = $h->metrics;
ok t_cmp($m, qr/^hotlimit_table_last_reload_successful 0$/m,
         "[$mpm] ?metrics: hotlimit_table_last_reload_successful 0 after the failure");
my ($failed) = $m =~ /^hotlimit_table_reloads_total\{result="failed"\} (\d+)$/m;
ok t_cmp(defined $failed && $failed >= 1 ? 1 : 0, 1,
         "[$mpm] ?metrics: hotlimit_table_reloads_total{result=\"failed\"} " . ($failed // 'missing'));
my ($ok) = $m =~ /^hotlimit_table_reloads_total\{result="ok"\} (\d+)$/m;
ok t_cmp(defined $ok && $ok >= 2 ? 1 : 0, 1, "[$mpm] ?metrics: result=\"ok\" " . ($ok // 'missing'));
ok t_cmp($m, qr/^# TYPE hotlimit_table_generation gauge\nhotlimit_table_generation $g2$/m,
         "[$mpm] ?metrics: hotlimit_table_generation $g2");
# The last publication's time: the good reload before the failed one.
my ($ts) = $m =~ /^hotlimit_table_last_reload_timestamp_seconds (\d+\.\d{3})$/m;
ok t_cmp(defined $ts && sprintf('%.0f', $ts * 1000) == $st->{table}{loaded_ms} ? 1 : 0, 1,
         "[$mpm] ?metrics: hotlimit_table_last_reload_timestamp_seconds " . ($ts // 'missing')
         . " = table.loaded_ms $st->{table}{loaded_ms} / 1000");
$h->stop;

# ---- statistics count what became of the request on every route it met --
# A table rule (2/1m) and a HotLimitQuota (10/1m) both apply to /both/x:
# the two requests the rule refuses are rejected on both routes; the
# directive's route, whose quota would have admitted them, does not count
# them as admitted.
$h = start_httpd(name => 'statsboth',
                 table => { routes => { '/both/x' => { max => 2, window => 60 } } },
                 conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
<Location /both>
    HotLimitQuota 10/1m
</Location>
CONF
ok t_cmp($h->codes('/both/x', 4), '200 200 429 429', "[$mpm] /both/x: the table rule admits 2 of 4");
$m = $h->metrics;
my %n;
for my $route ('/both', '/both/x') {
    for my $d ('admitted', 'rejected') {
        ($n{"$route $d"}) = $m =~ /^hotlimit_requests_total\{route="\Q$route\E",decision="$d"\} (\d+)$/m;
        $n{"$route $d"} //= 0;
    }
}
ok t_cmp("$n{'/both/x admitted'} $n{'/both/x rejected'}", '2 2',
         "[$mpm] ?metrics: the table route: 2 admitted, 2 rejected");
ok t_cmp($n{'/both admitted'}, 2,
         "[$mpm] ?metrics: the directive's route counts 2 admitted (what it served), not 4");
ok t_cmp($n{'/both rejected'}, 2,
         "[$mpm] ?metrics: ... and the 2 refused requests as rejected");
$h->stop;
