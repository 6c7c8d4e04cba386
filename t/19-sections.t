# Each quota has its own counters (spec section 8): two quotas in <If> and
# <ElseIf> of one <Location>, and two <Files same.txt> in different
# <Directory> blocks, never share a counter; what a client is shown as the
# route stays a URL path.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 9;

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
