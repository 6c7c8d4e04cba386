# The status page's summary line and charts (issue 27 items 3, 4; spec
# section 7): the line at the top names the store's health, the slots'
# fill (used/capacity, %) and evictions per second beside refusals per
# second, bans and the table state (also in ?json summary); each route's
# chart has a time axis (minutes ago to now), ticks on the value axis and
# grouped digits (1,234), inline SVG without script.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 11;

Apache::TestRequest::module('hl_names');
my @ab = hl_ab(port => hl_port('hl_names'), path => '/nm/flood?acct=flood', total => 1500, conc => 4);
ok t_cmp(@ab ? $ab[0] : 1500, 1500, '1,500 requests of one account (100 admitted)');

my $html = GET('/hotlimit-status')->content;
my ($summary) = $html =~ m{(<p id="summary">.*?</p>)}s;
$summary //= '';
ok t_cmp($summary, qr{<span id="store-health">store up \(shared memory\)</span>},
         'the summary line: the store is up');
ok t_cmp($summary, qr{<span id="slot-fill"[^>]*>slots \d[\d,]*/4,096 \(\d+%\)</span>},
         '... the slots used of 4,096 (grouped), in percent');
ok t_cmp($summary, qr{<span id="evictions-rate"[^>]*>\d+\.\d evictions/s</span>},
         '... evictions per second');
ok t_cmp($summary, qr{refusals/s now.*active ban.*evictions/s}s,
         '... beside refusals per second and bans');

my $j = hl_json(GET '/hotlimit-status?json') || {};
my $s = $j->{summary} || {};
ok t_cmp(join(' ', map { defined $s->{$_} ? $_ : "no-$_" }
              qw(store_health slots_used slots_capacity slots_pct evictions_per_s)),
         'store_health slots_used slots_capacity slots_pct evictions_per_s',
         '?json summary: store health, slot fill, evictions per second');
ok t_cmp("$s->{store_health} $s->{slots_capacity}", 'up 4096', '... up, of 4096 slots');

# The chart of /nm/flood: 100 admitted, 1,400 refused.
my ($row) = $html =~ m{(<tr class="route"><td class="name">[^<]*/nm/flood</td>.*?</tr>)}s;
$row //= '';
my ($svg) = $row =~ m{(<svg class="chart".*?</svg>)}s;
$svg //= '';
ok t_cmp($svg, qr{<g class="time-axis">.*>5 min ago</text>.*>-1</text>.*>now</text></g>}s,
         'the chart has a time axis: 5 min ago ... now');
ok t_cmp($svg, qr{<text class="tick"[^>]*>100</text>}, '... ticks on its value axis (100)');
ok t_cmp($svg, qr{<text class="tick max"[^>]*>\d{1,3}(?:,\d{3})*</text>}, '... its top labelled, digits grouped');
ok t_cmp($row, qr{100 admitted, 1,400 refused, 0 dry run in 5 min}, '... and the totals grouped');
