# Runs last: over the whole run, no child died on a signal and the module
# never failed to lock or attach its shared counters (which would have
# admitted requests unlimited).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HLTest;

plan tests => 3;

# The whole log: t/run-httpd-tests.sh starts every MPM with empty logs.
my @e = hl_lines_since(hl_error_log(), 0);
t_debug(scalar(@e) . " lines in the error log");

ok t_cmp(join("\n", grep { /exit signal|Segmentation fault|AH00052|double free|stack smashing/ } @e), '',
         'no child exited on a signal');
ok t_cmp(join("\n", grep { /HL0020[0-7]/ && !/HL00203/ } @e), '',
         'no shared-memory or mutex failure (HL00200-HL00207)');
ok t_cmp(join("\n", grep { /\[hotlimit:(?:emerg|alert|crit|error)\]/ } @e), '',
         'no hotlimit error, critical, alert or emergency line');
