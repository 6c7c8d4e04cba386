package HLFleet;
# What the tests of the cluster-wide view (issue 28) share: t/98 (redis://
# and redis-sentinel://) and t/100 (redis-cluster://) run one scenario on
# two httpds A and B sharing a store, each with RemoteIP trusting
# 127.0.0.1, HotLimitBan 8/1m 1h and HotLimitQuota 2/1m on /lim.
#
#   my $st = fleet_flood_and_rank($a, $b, $flood, $quiet, $label);  # 9 tests
#   line_of($h, qr{^HotLimitBan });  refused_row($st, "/lim|$ip");
use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use Time::HiRes qw(sleep);
use Apache::Test qw(ok);
use Apache::TestUtil qw(t_cmp);

our @EXPORT = qw(line_of fleet_as refused_row fleet_flood_and_rank);

# Returns the FILE:LINE of a directive (matching $re) in $h's
# configuration, or ''.
sub line_of {
    my ($h, $re) = @_;
    open my $fh, '<', $h->{conf_file} or die "$h->{conf_file}: $!";
    while (<$fh>) { return "$h->{conf_file}:$." if /$re/ }
    return '';
}

# Returns the status codes of $n requests to $h's /lim as client $ip.
sub fleet_as { my ($h, $ip, $n) = @_; $h->codes('/lim', $n, 'X-Forwarded-For' => $ip) }

# Returns the row of $st's ranking for $key, or undef.
sub refused_row {
    my ($st, $key) = @_;
    my ($e) = grep { $_->{key} eq $key } @{ $st->{top_refused} || [] };
    return $e;
}

# Floods $flood on $a only: 2 admitted, 8 refused by the quota (the 8th
# starts the ban), 2 refused as banned; then, a second later (a server
# publishes at most once a second), one more refusal publishes A's view
# as it is now. Refuses $quiet once on $b (published by B). Checks B's
# ranking: 9 tests ($label names the run). Returns B's ?json status.
sub fleet_flood_and_rank {
    my ($a, $b, $flood, $quiet, $label) = @_;
    ok t_cmp(fleet_as($a, $flood, 12), '200 200' . ' 429' x 10, "[$label] A: the flood, 2 admitted then refused");
    sleep 1.1;
    ok t_cmp(fleet_as($a, $flood, 1), '429', '... and a second later once more (banned)');
    ok t_cmp(fleet_as($b, $quiet, 3), '200 200 429', 'B: a quiet client refused once');

    my $st = $b->status;
    my $top = $st->{top_refused} || [];
    ok t_cmp(@$top ? $top->[0]{key} : '', "/lim|$flood", "B ranks the client flooded on A first");
    ok t_cmp(@$top ? $top->[0]{refusals} : -1, 8, '... with A\'s refusal count');
    ok t_cmp(@$top ? $top->[0]{rule} : '', line_of($b, qr{HotLimitQuota 2/1m}),
             '... and the rule that refused it');
    my $own = refused_row($st, "/lim|$quiet");
    ok t_cmp($own ? $own->{refusals} : -1, 1, 'B\'s own refusal counted once, not twice');
    ok t_cmp($st->{top_refused_servers} // 0, 2, 'summed over 2 servers');
    my $banned = refused_row($st, "ban|$flood");
    ok t_cmp($banned ? $banned->{refusals} : -1, 3, 'the refusals as banned on A are ranked on B too');
    return $st;
}

1;
