# HotLimitTableFailure last-good is the default (spec 2, issue 18 item 7):
# with no HotLimitTableFailure line, a local table that is
#   - truncated in place and left half written (a writer that died, or a
#     reload that caught the write midway),
#   - given a "1x" typo in one entry, or
#   - given a "1x" typo that breaks the JSON
# never leaves a route unprotected: the last good table stays (HL00404
# "the last good table stays"), a route whose new entry is invalid keeps its
# last valid rule (HL00411, spec 8), and requests are refused at the old
# limits. Before, the default was open: the rules were dropped and the
# login was unlimited until the file was fixed.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 25, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
my %routes = (
    '/login' => { limits => ['3/1m'] },
    '/reset' => { limits => ['2/1m'] },
    '/pw'    => { max => 2, window => '1m' },
    '/spare' => { limits => ['2/1m'] },
);
my $good = hl_json_encode({ routes => \%routes });

# Rewrites the table file in place (same inode, O_TRUNC) with $content.
sub write_in_place {
    my ($h, $content) = @_;
    my $path = $h->table_path;
    open my $fh, '>', $path or die "cannot write $path: $!";
    print {$fh} $content;
    close $fh or die "cannot write $path: $!";
}

my $h = start_httpd(name => 'lastgood-default', table => $good, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
CONF
ok t_cmp($h->codes('/login', 4), '200 200 200 429', "[$mpm] /login limited by the table (3/1m)");

# 1. Truncated in place and left half written.
my $off = $h->log_offset;
my $gen = $h->generation;
my $next = hl_json_encode({ routes => { %routes, '/new' => { limits => ['1/1m'] } } });
write_in_place($h, substr($next, 0, int(length($next) / 2)));
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5),
         qr/HL00404: quota table \S+table\.json failed: the document is not a valid quota table; the last good table stays \(HotLimitTableFailure last-good\)/,
         "[$mpm] half-written file: HL00404, the last good table stays (the default)");
ok t_cmp($h->codes('/login', 2), '429 429', "[$mpm] half-written file: /login still refused at its old limit");
ok t_cmp($h->codes('/reset', 3), '200 200 429', "[$mpm] half-written file: /reset (fresh) limited by the old table (2/1m)");
ok t_cmp($h->generation, $gen, "[$mpm] half-written file: nothing published");
my $st = $h->status;
ok t_cmp($st->{table}{last_result}, 'failed', "[$mpm] status: last_result failed");

# The writer finishes: the whole document is loaded.
$h->change_applies(sub { write_in_place($h, $next) }, 'the completed file');
ok t_cmp($h->codes('/new', 2), '200 429', "[$mpm] completed file: /new applies (1/1m)");
ok t_cmp($h->codes('/login', 1), '429', "[$mpm] completed file: /login kept its counter");

# 2. A "1x" typo in two entries: each route keeps its last valid rule.
$off = $h->log_offset;
my $typo = hl_json_encode({ routes => { %routes,
    '/login' => { limits => ['1x/1m'] },
    '/pw'    => { max => '1x', window => '1m' } } });
$h->change_applies(sub { write_in_place($h, $typo) }, 'the table with two "1x" typos');
ok t_cmp($h->wait_log(qr/HL00411: .*route '\/pw'/, $off, 1),
         qr/HL00411: quota table \S+: route '\/pw': field 'max': invalid entry skipped; the route keeps its rule from the table in force \(2\/1m\) \(HotLimitTableFailure last-good\)/,
         "[$mpm] typo: HL00411 names /pw, its field and the rule it keeps");
ok t_cmp($h->wait_log(qr/HL00411: .*route '\/login'/, $off, 1) ? 1 : 0, 1,
         "[$mpm] typo: HL00411 for /login too");
ok t_cmp($h->codes('/login', 2), '429 429', "[$mpm] typo: /login still refused (kept 3/1m)");
ok t_cmp($h->codes('/pw', 3), '200 200 429', "[$mpm] typo: /pw (fresh) limited by its kept rule (2/1m)");
ok t_cmp($h->status->{table}{message}, qr/2 kept their last valid rule/,
         "[$mpm] status: the message counts the kept rules");

# 3. A "1x" typo that breaks the JSON: the whole document fails.
$off = $h->log_offset;
$gen = $h->generation;
(my $broken = $good) =~ s/"max":2/"max":1x/ or die "no max in $good";
write_in_place($h, $broken);
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5),
         qr/HL00404: .*not a valid quota table; the last good table stays/,
         "[$mpm] \"max\": 1x (not JSON): HL00404, the last good table stays");
ok t_cmp($h->wait_log(qr/HL00401: .*not valid JSON/, $off, 1) ? 1 : 0, 1,
         "[$mpm] ... and the syntax error is logged (HL00401)");
ok t_cmp($h->codes('/login', 1), '429', "[$mpm] not JSON: /login still refused");
ok t_cmp($h->codes('/spare', 3), '200 200 429', "[$mpm] not JSON: /spare (fresh) limited by the last good table (2/1m)");
ok t_cmp($h->generation, $gen, "[$mpm] not JSON: nothing published");

# 4. Fixed: the table applies again (the kept rules give way to the entries).
$h->change_applies(sub { write_in_place($h, hl_json_encode({ routes => { %routes,
    '/pw' => { max => 4, window => '1m' } } })) }, 'the fixed table');
ok t_cmp($h->codes('/pw', 3), '200 200 429', "[$mpm] fixed: /pw 4/1m, 2 already spent");
$h->stop;
