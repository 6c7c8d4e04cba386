# The monitoring examples (conf-examples/monitoring: Prometheus config,
# alert rules, Grafana dashboard) name only metrics the module exports:
# ?metrics of this server, as Prometheus's scrape config asks for it
# ("?metrics="), is parsed by the Prometheus client's own text parser
# (t/support/check_metrics.py, python3-prometheus-client) and every
# hotlimit_* name in the examples must be a sample in it. The checker is
# shown to catch an unknown name and a parse error. With promtool in PATH
# the config and the rules are checked by it too, and the rules' unit
# tests (alerts.test.yml) run.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

# The first python3 that has prometheus_client: PATH's, else Debian's.
my ($py) = grep {
    system("$_ -c 'import prometheus_client' >/dev/null 2>&1") == 0
} 'python3', '/usr/bin/python3';
my $checker = "$FindBin::Bin/support/check_metrics.py";
# t/run-httpd-tests.sh copies the examples next to its copy of t/.
my ($dir) = grep { -d } map { "$_/conf-examples/monitoring" }
    grep { defined } $ENV{HOTLIMIT_TEST_WORK}, "$FindBin::Bin/..";

plan tests => 12,
    need { 'python3 with prometheus_client (apt-get install python3-prometheus-client)' => $py,
           'conf-examples/monitoring' => $dir };

my @files = sort glob "$dir/*.yml $dir/*.json";
my $logs = hl_logs();

# Returns the exit status and output of the checker on a metrics file.
sub check {
    my ($metrics, @examples) = @_;
    my $out = `$py $checker $metrics @examples 2>&1`;
    my $rc = $? >> 8;
    t_debug($out);
    return ($rc, $out);
}

# A decision of each kind the examples query, so hotlimit_requests_total
# has samples whatever ran before.
my @codes = map { GET('/mon/')->code } 1 .. 2;
ok t_cmp("@codes", '200 429', '/mon: 1 admitted, 1 rejected');

my $res = GET '/hotlimit-status?metrics=';
ok t_cmp($res->header('Content-Type') // '', qr{^text/plain; version=0\.0\.4},
         '?metrics= (what the scrape config sends): Prometheus text');
t_write_file("$logs/hl_metrics.txt", $res->content);

ok t_cmp(scalar(grep { m{/(?:prometheus\.yml|alerts\.yml|grafana-dashboard\.json)$} } @files), 3,
         'the Prometheus config, the alert rules and the dashboard are there');

my ($rc, $out) = check("$logs/hl_metrics.txt", @files);
ok t_cmp("$rc $out", qr/^0 ok: \d+ metric names/, 'every metric the examples name is exported');

# The checker is not vacuous: an unknown name, and text that does not parse.
t_write_file("$logs/hl_unknown.yml", "expr: rate(hotlimit_no_such_metric_total[5m])\n");
($rc, $out) = check("$logs/hl_metrics.txt", "$logs/hl_unknown.yml");
ok t_cmp("$rc $out", qr/^1 .*hotlimit_no_such_metric_total/s, 'checker: an unknown name fails');
t_write_file("$logs/hl_bad_metrics.txt", "# TYPE hotlimit_x gauge\nhotlimit_x{a=\"b} 1\n");
($rc, $out) = check("$logs/hl_bad_metrics.txt", @files);
ok t_cmp($rc, 2, 'checker: text that does not parse fails');

sub slurp { open my $fh, '<', $_[0] or die "$_[0]: $!"; local $/; <$fh> }

# Every shipped alert has a promtool unit test that makes it fire (and
# alerts.test.yml keeps quiet cases too: steady refusals, graceful
# restarts re-reading the same bad table).
{
    my @alerts = slurp("$dir/alerts.yml") =~ /^\s*- alert: (\w+)/mg;
    my %fires;
    for my $case (split /^\s*- eval_time:/m, slurp("$dir/alerts.test.yml")) {
        my ($name) = $case =~ /alertname: (\w+)/ or next;
        $fires{$name} = 1 if $case =~ /- exp_labels:/;
    }
    my @untested = grep { !$fires{$_} } @alerts;
    ok t_cmp(scalar(@alerts) . " alerts, untested: @untested", qr/^\d+ alerts, untested: $/,
             'alerts.test.yml makes every alert of alerts.yml fire');
}

# The dashboard answers "who" and "which rule": panels on the keys refused
# most and on the refusals per rule.
{
    my $dash = slurp("$dir/grafana-dashboard.json");
    ok t_cmp(($dash =~ /hotlimit_key_refusals/ ? 1 : 0) . ($dash =~ /hotlimit_route_refusals_total/ ? 1 : 0),
             '11', 'the Grafana dashboard queries hotlimit_key_refusals and hotlimit_route_refusals_total');
}

# --- promtool, when installed (Debian package prometheus) ---------------------
my $promtool = (grep { -x "$_/promtool" } split /:/, $ENV{PATH} // '')[0];
if ($promtool) {
    my $o = `$promtool/promtool check config $dir/prometheus.yml 2>&1`;
    ok t_cmp($? >> 8, 0, 'promtool check config prometheus.yml') or t_debug($o);
    $o = `$promtool/promtool check rules $dir/alerts.yml 2>&1`;
    ok t_cmp($? >> 8, 0, 'promtool check rules alerts.yml') or t_debug($o);
    # The rules' own unit tests: the spike alert fires on a new install
    # within its `for:`, stays quiet on steady refusals, fires on a spike.
    $o = `cd $dir && $promtool/promtool test rules alerts.test.yml 2>&1`;
    ok t_cmp($? >> 8, 0, 'promtool test rules alerts.test.yml') or t_debug($o);
    ok t_cmp($o, qr/SUCCESS/, 'promtool test rules: SUCCESS');
}
else {
    skip 'promtool (package prometheus) is not installed' for 1 .. 4;
}
