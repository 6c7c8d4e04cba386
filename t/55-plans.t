# Plans (spec section 3): the table's "plans" give tiers per key, chosen for
# each request by a route's "plan" selector (here an environment variable
# set by SetEnvIf, as an auth layer or RewriteMap would): a free and a pro
# key get their plan's limits; an absent or unknown plan uses the route's
# own limits and counters (an invented plan name is no way to fresh
# counters); when a plan's limits change, the counters of its keys carry
# over.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 10;

my $mpm = hl_mpm();
sub table {
    my ($pro) = @_;
    return { routes => {
                 '/api' => { limits => ['1/1m'], by => 'header:X-Key',
                             plan => 'env:HOTLIMIT_PLAN' },
             },
             plans => {
                 free => { limits => ['2/1m'] },
                 pro  => { limits => [$pro], concurrency => 4 },
             } };
}

my $h = start_httpd(name => 'plans', table => table('5/1m'), conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
# The plan comes from what the client proved (an API token here), never
# from what it claims.
SetEnvIf X-Token "^pro-secret$" HOTLIMIT_PLAN=pro
SetEnvIf X-Token "^free-token$" HOTLIMIT_PLAN=free
SetEnvIf X-Token "^gold$" HOTLIMIT_PLAN=gold
CONF

sub codes {
    my ($key, $token, $n) = @_;
    return join ' ', map { $h->get('/api', 'X-Key' => $key,
                                   ($token ? ('X-Token' => $token) : ()))->code } 1 .. $n;
}

ok t_cmp(codes('A', 'free-token', 3), '200 200 429', "[$mpm] a free key: 2 of its plan's 2/1m");
ok t_cmp(codes('B', 'pro-secret', 6), '200 200 200 200 200 429', "[$mpm] a pro key: 5 of its plan's 5/1m");
ok t_cmp(codes('C', undef, 2), '200 429', "[$mpm] no plan: the route's own 1/1m");
ok t_cmp(codes('D', 'gold', 1) . ' ' . codes('D', undef, 1), '200 429',
         "[$mpm] an unknown plan counts as the route's own limits and counters");
ok t_cmp(codes('D', 'gold', 1), '429', "[$mpm] ... so an invented name frees nothing");
my $res = $h->get('/api', 'X-Key' => 'F', 'X-Token' => 'pro-secret');
ok t_cmp($res->header('RateLimit-Policy') // '', '"5/1m";q=5;w=60',
         "[$mpm] RateLimit-Policy tells the pro key its plan's limits");

# A plan's limits change: counters of its keys carry over.
ok t_cmp(codes('E', 'pro-secret', 3), '200 200 200', "[$mpm] key E spends 3 of pro's 5");
$h->change_applies(sub { write_table($h->table_path, table('4/1m')) }, 'pro becomes 4/1m');
ok t_cmp(codes('E', 'pro-secret', 2), '200 429',
         "[$mpm] ... E keeps its 3: one more of 4, then refused");
