# An invalid entry under HotLimitTableFailure last-good (issue 6, defect
# 9): a route whose new entry is invalid keeps its last valid rule (HL00411)
# instead of going unprotected; under open it is dropped as before. The
# skipped entries are counted in ?metrics (hotlimit_table_skipped_entries),
# ?json (table.skipped) and on the HTML status page.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 25, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();

my $good = { routes => { '/login' => { limits => ['3/1m'] },
                         '/other' => { max => 1, window => 60 } } };
my $bad  = { routes => { '/login' => { limits => ['30/1x'] },
                         '/other' => { max => 1, window => 60 } } };

# Returns the value of hotlimit_table_skipped_entries, or 'missing'.
sub skipped_metric {
    my ($v) = $_[0]->metrics =~ /^hotlimit_table_skipped_entries (\d+)$/m;
    return $v // 'missing';
}

# ---------------------------------------------------------------------------
# last-good: /login keeps 3/1m
# ---------------------------------------------------------------------------
my $h = start_httpd(name => 'keep-lastgood', table => $good, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
HotLimitTableFailure last-good
CONF
ok t_cmp($h->codes('/login', 1), '200', "[$mpm] /login: 1 of 3 spent");
ok t_cmp(skipped_metric($h), 0, "[$mpm] ?metrics: 0 entries skipped at first");

my $off = $h->log_offset;
$h->change_applies(sub { write_table($h->table_path, $bad) },
                   'table with an invalid /login entry published');
ok t_cmp($h->wait_log(qr/HL00401/, $off, 1),
         qr/HL00401: .*skipped: route '\/login': field 'limits': .*30\/1x/,
         "[$mpm] the invalid entry is logged (HL00401)");
ok t_cmp($h->wait_log(qr/HL00411/, $off, 1),
         qr/HL00411: quota table \S+: route '\/login': field 'limits': invalid entry skipped; the route keeps its rule from the table in force \(3\/1m\) \(HotLimitTableFailure last-good\)/,
         "[$mpm] the kept rule is logged with route and field (HL00411)");
ok t_cmp($h->wait_log(qr/HL00405/, $off, 1),
         qr/loaded: 2 routes, .*1 entries skipped \(1 kept their last valid rule\)/,
         "[$mpm] HL00405: 2 routes, 1 skipped, 1 kept");
my $res = $h->get('/login');
ok t_cmp($res->header('X-HL-Route'), '/login', "[$mpm] /login still matches a table route");
ok t_cmp(join(' ', $res->code, $h->codes('/login', 2)), '200 200 429',
         "[$mpm] /login still 429 after 3 (its counter kept)");
ok t_cmp(skipped_metric($h), 1, "[$mpm] ?metrics: hotlimit_table_skipped_entries 1");
my $st = $h->status;
ok t_cmp($st->{table}{skipped}, 1, "[$mpm] ?json: table.skipped 1");
ok t_cmp($st->{table}{message}, '2 routes, 1 entries skipped (1 kept their last valid rule)',
         "[$mpm] ?json: the message says one rule was kept");
ok t_cmp($h->get('/hotlimit-status')->content,
         qr{<th>entries skipped \(invalid\)</th><td>1</td>},
         "[$mpm] HTML status page: entries skipped 1");

# Another invalid version: still the last valid rule (not the last document).
$h->change_applies(sub { write_table($h->table_path, { routes => {
    %{ $bad->{routes} }, '/login' => { limits => ['0/1m'] } } }) },
    'a second invalid /login entry published');
ok t_cmp($h->codes('/login', 1), '429', "[$mpm] /login still limited (3/1m kept again)");

# A valid entry again: it applies, nothing skipped.
$h->change_applies(sub { write_table($h->table_path, { routes => {
    %{ $good->{routes} }, '/login' => { limits => ['5/1m'] } } }) },
    'a valid /login entry published');
ok t_cmp($h->codes('/login', 3), '200 200 429', "[$mpm] /login follows its new count (3 -> 5)");
ok t_cmp(skipped_metric($h), 0, "[$mpm] ?metrics: 0 entries skipped again");
$h->stop;

# ---------------------------------------------------------------------------
# open: the invalid entry is dropped
# ---------------------------------------------------------------------------
$h = start_httpd(name => 'keep-open', table => $good, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
HotLimitTableFailure open
CONF
ok t_cmp($h->codes('/login', 3), '200 200 200', "[$mpm] open: /login 3 of 3 spent");
$off = $h->log_offset;
my $gen = $h->generation;
write_table($h->table_path, $bad);
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] open: table with the invalid entry published");
ok t_cmp($h->codes('/login', 2), '200 200', "[$mpm] open: /login no longer limited (entry dropped)");
ok t_cmp(skipped_metric($h), 1, "[$mpm] open: ?metrics: hotlimit_table_skipped_entries 1");
ok t_cmp(scalar(grep { /HL00411/ } $h->log_lines($off)), 0, "[$mpm] open: nothing kept (no HL00411)");
$h->stop;
