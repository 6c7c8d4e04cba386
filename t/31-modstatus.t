# mod_status integration: server-status has a "mod_hotlimit" section and
# server-status?auto "HotLimit...: value" lines, through mod_status's
# status_hook. A known rejection on /mstat (1 a minute) moves
# HotLimitRejectedTotal by exactly one, and the ?auto figures agree with
# the hotlimit-status handler's ?json.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 16, need need_module('mod_status.c');

# Returns the HotLimit lines of server-status?auto as a hash, and the body.
sub auto_lines {
    my $res = GET '/server-status?auto';
    my %v = $res->content =~ /^(HotLimit\w+): (.*)$/mg;
    return (\%v, $res);
}

my ($before, $res) = auto_lines();
t_debug(join "\n", grep { /^HotLimit/ } split /\n/, $res->content);
ok t_cmp($res->code, 200, '?auto: 200');
my @keys = qw(HotLimitSlotsUsed HotLimitSlotsCapacity HotLimitEvictionsTotal
              HotLimitTableGeneration HotLimitTableLastResult
              HotLimitTableLastReloadTimestamp HotLimitTableReloadsFailedTotal
              HotLimitAdmittedTotal HotLimitRejectedTotal HotLimitDryRunTotal
              HotLimitUptimeSeconds);
my @missing = grep { !defined $before->{$_} } @keys;
ok t_cmp("@missing", '', '?auto: every HotLimit line is there');
ok t_cmp($res->content, qr/^ServerUptimeSeconds: \d+$/m, "?auto: mod_status's own lines too");
ok t_cmp($res->content !~ /</ ? 1 : 0, 1, '?auto: no HTML from the hook');
ok t_cmp($before->{HotLimitSlotsCapacity}, 4096, 'HotLimitSlotsCapacity: 4096 (HotLimitSlots)');
ok t_cmp($before->{HotLimitTableLastResult}, 'none', 'HotLimitTableLastResult: none (no quota table)');
ok t_cmp($before->{HotLimitUptimeSeconds}, qr/^\d+$/, 'HotLimitUptimeSeconds: whole seconds');

my @codes = map { GET('/mstat/')->code } 1 .. 2;
ok t_cmp("@codes", '200 429', '/mstat: 1 admitted, 1 rejected');

my ($after) = auto_lines();
ok t_cmp($after->{HotLimitRejectedTotal} - $before->{HotLimitRejectedTotal}, 1,
         "HotLimitRejectedTotal: $before->{HotLimitRejectedTotal} -> $after->{HotLimitRejectedTotal}");
ok t_cmp($after->{HotLimitAdmittedTotal} - $before->{HotLimitAdmittedTotal}, 1,
         'HotLimitAdmittedTotal: one more');
ok t_cmp($after->{HotLimitSlotsUsed} > 0 ? 1 : 0, 1, "HotLimitSlotsUsed: $after->{HotLimitSlotsUsed} > 0");

# The same figures as the handler's ?json (nothing else ran meanwhile).
my $j = hl_json(GET '/hotlimit-status?json') || {};
ok t_cmp(($j->{totals}{rejected} // -1), $after->{HotLimitRejectedTotal},
         '?json totals.rejected = HotLimitRejectedTotal');
ok t_cmp(($j->{slots}{used} // -1), $after->{HotLimitSlotsUsed},
         '?json slots.used = HotLimitSlotsUsed');

# --- the HTML page -------------------------------------------------------------
$res = GET '/server-status';
my $html = $res->content;
t_debug($1) if $html =~ m{(<h2 id="hotlimit">.*?</dl>)}s;
ok t_cmp($html, qr{<h2 id="hotlimit">mod_hotlimit</h2>}, 'server-status: a mod_hotlimit section');
ok t_cmp($html, qr{<dt>Counter slots: \d+ used of 4096 \([\d.]+%\), \d+ evictions</dt>},
         'server-status: slots used of capacity, evictions');
ok t_cmp($html, qr{<dt>Decisions: \d+ admitted, $after->{HotLimitRejectedTotal} rejected, \d+ dry run</dt>.*<dt>Counting for: \d+ (?:s|min|h|d)}s,
         'server-status: decisions and uptime');
