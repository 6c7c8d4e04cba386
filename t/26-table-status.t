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

plan tests => 24 + 3 + 2 + 5, need need_module('mod_hotlimit.c');

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
ok t_cmp($st->{table}{message}, qr/^the document is not a valid quota table(?:: |$)/,
         "[$mpm] ?json: the failure's message");
ok t_cmp($st->{table}{reloads}{failed} >= 1 ? 1 : 0, 1, "[$mpm] ?json: reloads.failed counted");
ok t_cmp($st->{table}{generation}, $g2, "[$mpm] ?json: last-good published nothing");
# The page's summary line says so at the top, in red, with the message.
my $html = $h->get('/hotlimit-status')->content;
ok t_cmp($html, qr{<h1>mod_hotlimit status</h1><p id="summary">.*<span id="table-state" class="warn"><b>quota table: last reload FAILED</b>: the document is not a valid quota table}s,
         "[$mpm] HTML: the failed reload in red in the summary line at the top");
write_table($h->table_path, '{"routes": {"/s": ');
ok t_cmp($h->wait_log(qr/near line 1, column/, $off, 5) ? 1 : 0, 1, "[$mpm] a table cut short fails");
# (the status records it just after logging it)
wait_until(sub { ($h->status->{table}{message} // '') =~ /near line/ }, 3);
$html = $h->get('/hotlimit-status')->content;
ok t_cmp($html, qr{<p id="summary">.*<span id="table-state" class="warn">[^\n]*near line 1, column \d+}s,
         "[$mpm] HTML: the summary line shows where the parse failed");

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
# the two requests the rule refuses are rejected once, on the rule's
# route (issue 27); the directive's route, whose quota would have
# admitted them, counts them neither as admitted nor as rejected.
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
ok t_cmp($n{'/both rejected'}, 0,
         "[$mpm] ?metrics: ... nor the 2 refused requests as rejected (counted once, by the rule)");
# ... but only the rule that refused them counts them as its own refusals.
my %by = $m =~ /^hotlimit_route_refusals_total\{route="([^"]*)"\} (\d+)$/mg;
ok t_cmp(($by{'/both/x'} // 'missing') . ' ' . ($by{'/both'} // 'missing'), '2 0',
         "[$mpm] ?metrics: hotlimit_route_refusals_total: the table rule 2, the directive 0");
my %rule = map { $_->{route} => $_ } @{ $h->status->{routes} || [] };
ok t_cmp(join(' ', map { $rule{$_} ? "$rule{$_}{rule}=$rule{$_}{refused_by_rule}" : "$_ missing" } '/both/x', '/both'),
         qr{^table /both/x=2 \S+\.conf:\d+=0$},
         "[$mpm] ?json: each rule labelled (table route, FILE:LINE) with its own refusals");
$h->stop;

# ---- one row per table rule, whichever virtual host counted it ----------
# Every request is a virtual host's (counted under its host:port): the
# main page sums them into the rule's one row.
$h = start_httpd(name => 'onerow',
                 table => { routes => { '/t1' => { max => 2, window => 60 } } },
                 conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
<VirtualHost *>
    ServerName 127.0.0.1
</VirtualHost>
<VirtualHost *>
    ServerName shop.example
</VirtualHost>
CONF
ok t_cmp($h->codes('/t1', 3) . ', ' . $h->codes('/t1', 3, Host => 'shop.example'),
         '200 200 429, 429 429 429', "[$mpm] /t1 in two virtual hosts: 2 admitted (one counter by address)");
my @rows = grep { $_->{route} =~ m{/t1$} } @{ $h->status->{routes} || [] };
ok t_cmp(scalar @rows, 1, "[$mpm] ?json: one row for the rule /t1");
ok t_cmp(@rows ? "$rows[0]{route} $rows[0]{rule} $rows[0]{admitted}/$rows[0]{rejected}/$rows[0]{refused_by_rule}" : '',
         '/t1 table /t1 2/4/4', "[$mpm] ... holding both hosts' counts");
$html = $h->get('/hotlimit-status')->content;
ok t_cmp(scalar(() = $html =~ m{<td class="name">[^<]*/t1</td>}g), 1, "[$mpm] HTML: one row for /t1");
ok t_cmp($html =~ /not configured here/ ? 1 : 0, 0, "[$mpm] HTML: no row 'not configured here'");
$h->stop;
