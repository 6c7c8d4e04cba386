# hotlimit-check, the table checker built from the module's parser: a good
# table exits 0 with a summary; a bad entry exits 1 naming its route and
# field; a document that is not JSON exits 1. (t/unit/test_check.sh covers
# the rest of its output.)
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use File::Path ();

my $check = ($ENV{HOTLIMIT_TEST_WORK} // '') . '/hotlimit-check';
plan tests => 8, need { "hotlimit-check not built ($check)" => -x $check };

# Its own tables (t/tables/ belongs to t/unit/test_check.sh).
my $dir = Apache::Test::vars('t_logs') . "/hltable-check-$$";
mkdir $dir;
write_table("$dir/good.json", <<'JSON');
{
  "enabled": true,
  "routes": {
    "/user/login": { "limits": ["5/1m", "30/1h"] },
    "user.sms":    { "max": 1, "window": "60s" },
    "/api":        { "max": 600, "window": 60, "algo": "gcra", "burst": 100 }
  },
  "exempt": ["10.0.0.0/8"]
}
JSON
write_table("$dir/bad-entry.json", <<'JSON');
{
  "routes": {
    "/user/login": { "limits": ["5/1m"] },
    "/user/sms":   { "max": 1, "window": "60x" }
  }
}
JSON
write_table("$dir/not-json.json", qq({\n  "routes": {\n    "/user/login": { "limits": ["5/1m"] },\n  }\n));

# Runs the checker on $file; returns (exit status, output).
sub check {
    my $file = shift;
    my $out = `'$check' '$file' 2>&1`;
    return ($? >> 8, $out);
}

my ($rc, $out) = check("$dir/good.json");
ok t_cmp($rc, 0, 'good table: exit 0');
ok t_cmp($out, qr/^hotlimit-check: \S+good\.json: 3 routes, 1 exempt, enabled, 0 errors, 0 warnings$/m,
         'good table: summary line');

($rc, $out) = check("$dir/bad-entry.json");
ok t_cmp($rc, 1, 'bad entry: exit 1');
ok t_cmp($out, qr/^hotlimit-check: error: route '\/user\/sms': field 'window': .*'60x'/m,
         'bad entry: the problem names the route and the field');
ok t_cmp($out, qr/1 routes, .*1 errors/, 'bad entry: the good route still counts (summary)');

($rc, $out) = check("$dir/not-json.json");
ok t_cmp($rc, 1, 'not JSON: exit 1');
ok t_cmp($out, qr/^hotlimit-check: error: not valid JSON near line \d+, column \d+/m,
         'not JSON: where the syntax breaks');
ok t_cmp($out, qr/table refused/, 'not JSON: the table is refused');
File::Path::rmtree($dir);
