# A local quota table file (HotLimitQuotaTable PATH), on private httpd
# instances: in force from the first request; a change applies within
# HotLimitReloadInterval + 1 s; count and window changes follow at once;
# counters of unchanged routes are kept; a broken or deleted file is a
# table failure (open: rules dropped, last-good: old limits stay); an
# invalid entry is skipped and logged with its route and field.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(time sleep);
use HotLimitTable;

plan tests => 49, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
sub rule { my ($max, $w) = @_; return { max => $max, window => $w // 60 } }

my $t1 = { enabled => JSON::PP::true(), routes => {
    '/a' => rule(3), '/b' => rule(1), '/c' => { limits => ['2/1m'] },
    '/w' => rule(2),
} };

# ---------------------------------------------------------------------------
# HotLimitTableFailure open
# ---------------------------------------------------------------------------
my $h = start_httpd(name => 'file-open', table => $t1, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
HotLimitTableFailure open
CONF

# In force from the very first request: the parent read the file at
# startup, before any reload interval passed.
ok t_cmp($h->codes('/c', 3), '200 200 429',
         "[$mpm] local table in force from the first request (/c 2/1m)");
ok t_cmp($h->codes('/a', 2), '200 200', "[$mpm] /a: 2 of its 3 spent");
ok t_cmp($h->codes('/w', 3), '200 200 429', "[$mpm] /w: 2/60s exhausted");
my $res = $h->get('/b');
ok t_cmp($res->header('X-HL-Route'), '/b', "[$mpm] HOTLIMIT_ROUTE is the table route");

# A change (a new route, /b changed, /a untouched) applies within interval + 1 s.
my $t2 = { routes => { %{ $t1->{routes} }, '/b' => rule(5), '/new' => rule(1) } };
$h->change_applies(sub { write_table($h->table_path, $t2) }, 'changed file reloaded');
my ($gen, $t0);
ok t_cmp($h->codes('/new', 2), '200 429', "[$mpm] the new route /new (1/60s) applies");
ok t_cmp($h->codes('/a', 2), '200 429',
         "[$mpm] /a (unchanged) kept its counter: exactly 1 more of 3");
ok t_cmp($h->codes('/b', 3), '200 200 200', "[$mpm] /b follows its new count (1 -> 5)");
ok t_cmp($h->get('/b')->header('X-HL-Remaining'), '0', "[$mpm] /b: 5 of 5 spent (1 before the change, 4 after)");

# /w: a count change follows at once, keeping the counter...
$gen = $h->generation;
write_table($h->table_path, { routes => { %{ $t2->{routes} }, '/w' => rule(4) } });
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] /w count 2 -> 4 published");
ok t_cmp($h->codes('/w', 3), '200 200 429', "[$mpm] /w admits exactly 2 more (count 4, counter kept)");
# ... and so does a window change: 4 per 60 s -> 4 per 2 s, already expired
# or expiring within 2 s, without restart.
$gen = $h->generation;
write_table($h->table_path, { routes => { %{ $t2->{routes} }, '/w' => rule(4, '2s') } });
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] /w window 60s -> 2s published");
$t0 = time;
my $code = wait_until(sub { my $c = $h->get('/w')->code; $c == 200 ? $c : 0 }, 3);
ok t_cmp($code, 200, "[$mpm] /w admitted again under its new 2 s window after "
         . elapsed_since($t0) . " s");
ok t_cmp($h->get('/w')->header('X-HL-Remaining'), '2', "[$mpm] /w counts in the new window (4 per 2s)");

# A broken file: HL00404, the table's rules are dropped.
my $off = $h->log_offset;
write_table($h->table_path, '{"routes": {"/c": {"max": 1, "window": 60}');
my $line = $h->wait_log(qr/HL00404/, $off, 5);
ok t_cmp($line, qr/HL00404: quota table \S+table\.json failed: the document is not a valid quota table; its rules are dropped \(HotLimitTableFailure open\)/,
         "[$mpm] broken file: HL00404 logged");
ok t_cmp($h->wait_log(qr/HL00401: .*not valid JSON/, $off, 1),
         qr/not valid JSON near line 1/, "[$mpm] ... with where the JSON breaks");
ok t_cmp($h->codes('/c', 3), '200 200 200', "[$mpm] open: /c (exhausted) admitted again");
$res = $h->get('/a');
ok t_cmp($res->code, 200, "[$mpm] open: /a admitted");
ok t_cmp($res->header('X-HL-Route'), undef, "[$mpm] open: no table route matched");

# A good file again: the rules are back, counters still there.
$gen = $h->generation;
write_table($h->table_path, $t2);
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] repaired file reloaded");
ok t_cmp($h->codes('/c', 1), '429', "[$mpm] /c limited again (its counter survived)");

# A deleted file: a failure like any other.
$off = $h->log_offset;
unlink $h->table_path;
$line = $h->wait_log(qr/HL00404/, $off, 5);
ok t_cmp($line, qr/HL00404: .*failed: cannot stat the file; its rules are dropped/,
         "[$mpm] deleted file: HL00404 logged");
ok t_cmp($h->codes('/c', 2), '200 200', "[$mpm] open: /c admitted while the file is gone");

# Invalid entries: the bad one is skipped and logged (route and field),
# the good one applies.
my $invalid = { routes => {
    '/bad'  => { max => 1, window => '60x' },
    '/bad2' => { max => -3, window => 60 },
    '/good' => rule(1),
} };
$gen = $h->generation;
$off = $h->log_offset;
write_table($h->table_path, $invalid);
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] table with invalid entries loaded");
$line = $h->wait_log(qr/HL00401.*'\/bad'/, $off, 2);
ok t_cmp($line, qr/HL00401: quota table \S+: skipped: route '\/bad': field 'window': .*60x/,
         "[$mpm] HL00401 names route /bad and field window");
ok t_cmp($h->wait_log(qr/HL00401.*'\/bad2'/, $off, 1), qr/route '\/bad2': field 'max'/,
         "[$mpm] HL00401 names route /bad2 and field max");
ok t_cmp($h->wait_log(qr/HL00405/, $off, 1), qr/1 routes, .* 2 entries skipped/,
         "[$mpm] HL00405: 1 route loaded, 2 skipped");
ok t_cmp($h->codes('/good', 2), '200 429', "[$mpm] the good entry applies");
ok t_cmp($h->codes('/bad', 3), '200 200 200', "[$mpm] the bad entry is not applied");

# The same document again (a new mtime, the same bytes): the reloader reads
# it, sees the digest of the document in force and publishes nothing, so
# neither the problems nor HL00405 are logged again.
$gen = $h->generation;
$off = $h->log_offset;
write_table($h->table_path, $invalid);
sleep $HotLimitTable::APPLY_WITHIN + 0.5;
ok t_cmp($h->generation, $gen, "[$mpm] identical document: nothing published");
ok t_cmp(scalar(grep { /HL0040[15]/ } $h->log_lines($off)), 0,
         "[$mpm] identical document: its problems are not logged again");

# A route name from the document is escaped in the log (HL00401) with
# ap_escape_logitem: a newline, a quote and an ESC cannot split the line or
# end the quoted name. httpd escapes the message once more when it writes
# the error log (a backslash doubled), so \n shows as \\n.
$gen = $h->generation;
$off = $h->log_offset;
write_table($h->table_path, { routes => {
    "/n\nq\"e\x1b" => { max => 1, window => '60x' },
    '/good' => rule(1),
} });
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] table with a hostile route name loaded");
$line = $h->wait_log(qr/HL00401/, $off, 2);
ok t_cmp($line, qr/HL00401: quota table \S+: skipped: route '\/n\\\\nq\\\\"e\\\\x1b': field 'window': .*60x/,
         "[$mpm] HL00401: the route name is escaped on one line");
ok t_cmp(scalar(grep { /\x1b/ || /^q"e/ } $h->log_lines($off)), 0,
         "[$mpm] ... no raw ESC, no line starting with the rest of the name");

$h->stop;

# ---------------------------------------------------------------------------
# HotLimitTableFailure last-good
# ---------------------------------------------------------------------------
$h = start_httpd(name => 'file-lastgood',
                 table => { routes => { '/a' => rule(2), '/c' => rule(1), '/d' => rule(1) } },
                 conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
HotLimitTableFailure last-good
CONF
ok t_cmp($h->codes('/a', 3), '200 200 429', "[$mpm] last-good instance: /a 2/60s");

$off = $h->log_offset;
$gen = $h->generation;
write_table($h->table_path, 'this is not JSON');
$line = $h->wait_log(qr/HL00404/, $off, 5);
ok t_cmp($line, qr/HL00404: .*not a valid quota table; the last good table stays \(HotLimitTableFailure last-good\)/,
         "[$mpm] broken file: HL00404 logged (last-good)");
ok t_cmp($h->codes('/a', 1), '429', "[$mpm] last-good: /a still limited");
ok t_cmp($h->codes('/c', 2), '200 429', "[$mpm] last-good: /c (fresh) limited by the old table");
ok t_cmp($h->generation, $gen, "[$mpm] last-good: nothing was published");

# Repaired, with a new route; then deleted.
write_table($h->table_path, { routes => { '/a' => rule(2), '/c' => rule(1), '/d' => rule(1), '/e' => rule(1) } });
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] repaired file reloaded");
$off = $h->log_offset;
unlink $h->table_path;
$line = $h->wait_log(qr/HL00404/, $off, 5);
ok t_cmp($line, qr/HL00404: .*cannot stat the file; the last good table stays/,
         "[$mpm] deleted file: HL00404 logged (last-good)");
ok t_cmp($h->codes('/d', 2), '200 429', "[$mpm] last-good: /d limited while the file is gone");
ok t_cmp($h->codes('/e', 2), '200 429', "[$mpm] last-good: /e (added before deletion) limited too");
ok t_cmp($h->codes('/a', 1), '429', "[$mpm] last-good: /a still limited");
$h->stop;

# ---------------------------------------------------------------------------
# A table file missing at startup: httpd starts, the failure is logged, and
# the table applies once the file appears.
# ---------------------------------------------------------------------------
$h = start_httpd(name => 'file-missing', conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
CONF
ok t_cmp($h->codes('/m', 2), '200 200', "[$mpm] table file missing at startup: httpd serves, nothing limited");
ok t_cmp($h->wait_log(qr/HL00404/, 0, 1), qr/HL00404: .*table\.json failed: cannot stat the file/,
         "[$mpm] ... and the failure is logged at startup (HL00404)");
$gen = $h->generation;
$t0 = time;
write_table($h->table_path, { routes => { '/m' => rule(1) } });
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1,
         "[$mpm] the file appears: loaded after " . elapsed_since($t0) . " s");
ok t_cmp($h->codes('/m', 2), '200 429', "[$mpm] /m limited (1/60s)");
$h->stop;
