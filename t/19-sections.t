# Each quota has its own counters (spec section 8): two quotas in <If> and
# <ElseIf> of one <Location>, and two <Files same.txt> in different
# <Directory> blocks, never share a counter; what a client is shown as the
# route stays a URL path. One <LocationMatch> quota under three
# <Directory> sections takes each directory's settings at every request
# (merges are kept per process: mod_hotlimit_merge_memo.c).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 16;

sub codes { my ($url, $n) = @_; join ' ', map { GET($url)->code } 1 .. $n }

ok t_cmp(codes('/ifs/?a', 3), '200 200 429', '<If> a: 2/1m');
ok t_cmp(codes('/ifs/?b', 3), '200 200 429', '<ElseIf> b: its own 2/1m, not the <If> counter');
ok t_cmp(GET('/ifs/?c')->code, 200, 'neither branch: not limited');
{
    my $j = hl_json(GET('/ifs/?a', Accept => 'application/problem+json')) || {};
    ok t_cmp($j->{route} // '', '/ifs', 'the <If> route shown is the URL path');
}

ok t_cmp(GET('/fa/same.txt')->code, 200, '<Files same.txt> in /fa: 1 of 1/1m');
ok t_cmp(GET('/fb/same.txt')->code, 200, '<Files same.txt> in /fb: its own 1/1m');
ok t_cmp(GET('/fa/same.txt')->code, 429, '/fa spent');
ok t_cmp(GET('/fb/same.txt')->code, 429, '/fb spent');
{
    my $res = GET('/fb/same.txt', Accept => 'application/json');
    my $j = hl_json($res) || {};
    ok t_cmp($j->{route} // '', '/fb/same.txt', 'the <Files> route shown is the URL path');
}

# One counter (the <LocationMatch> quota, 4/1m) under /mm1 (headers on),
# /mm2 (headers off) and /mm3 (dry run), requests in turn: each shows its
# own directory's settings however often the merge was made before.
{
    my @seen;
    for my $d (qw(mm1 mm2 mm3 mm1 mm2 mm3 mm1)) {
        my $res = GET("/$d/x.txt");
        push @seen, $res->code . ':' . (defined $res->header('RateLimit') ? 'h' : '-');
    }
    ok t_cmp($seen[0], '200:h', '/mm1: counted, headers on');
    ok t_cmp($seen[1], '200:-', '/mm2: counted, headers off');
    ok t_cmp($seen[2], '200:h', '/mm3: counted (dry run), headers on');
    ok t_cmp($seen[3], '200:h', '/mm1: the 4th of 4');
    ok t_cmp($seen[4], '429:-', '/mm2: refused, headers still off');
    ok t_cmp($seen[5], '200:h', '/mm3: dry run admits what is spent');
    ok t_cmp($seen[6], '429:h', '/mm1: refused, headers on');
}
