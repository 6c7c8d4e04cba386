# The PHP login page is throttled at 5/1m without any change to the PHP file.
use strict;
use warnings FATAL => 'all';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use FindBin;
use lib "$FindBin::Bin/lib";
use HLTest qw(hl_php_module);

plan tests => 9, need need_module(hl_php_module()), need_apache_mpm('prefork');

for my $i (1 .. 5) {
    my $res = GET '/login.php', 'X-Test' => "attempt $i";
    ok t_cmp($res->code, 200, "attempt $i admitted");
    if ($i == 5) {
        ok t_cmp($res->content, qr/remaining=0/, 'PHP sees HOTLIMIT_REMAINING=0 on the fifth');
    }
}
my $res = GET '/login.php';
ok t_cmp($res->code, 429, 'sixth attempt rejected');
ok t_cmp($res->content, qr/<meta name="robots" content="noindex, nofollow">/, 'HTML 429 page');
ok t_cmp($res->content !~ /login page/ ? 1 : 0, 1, "PHP did not run for the rejected request");
