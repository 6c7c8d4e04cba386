# Quota keys other than the client address: by=user (REMOTE_USER after
# authentication), by=global (one bucket for everyone) and by=env:NAME (a
# variable set by SetEnvIf), each falling back to the client address when
# the key is absent.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 16;

sub codes {
    my ($path, $n, @h) = @_;
    return join ' ', map { GET($path, @h)->code } 1 .. $n;
}

# --- by=user ------------------------------------------------------------------------------
{
    my $file = hl_logs() . '/hl.htpasswd';
    open my $fh, '>', $file or die "$file: $!";
    for my $u (qw(alice bob Carol carol)) {
        print {$fh} "$u:" . crypt("$u-secret", '$5$hltestsalt$') . "\n";
    }
    close $fh;
    my @alice = (username => 'alice', password => 'alice-secret');
    my @bob = (username => 'bob', password => 'bob-secret');
    ok t_cmp(codes('/byuser/', 3, @alice), '200 200 429', 'by=user: alice gets 2, then 429');
    ok t_cmp(codes('/byuser/', 2, @bob), '200 200', 'by=user: bob has his own bucket');
    my $res = GET '/byuser/', @alice, Accept => 'application/json';
    ok t_cmp((hl_json($res) || {})->{route}, '/byuser', 'by=user: the 429 names the route');
    ok t_cmp(GET('/byuser/', username => 'alice', password => 'wrong')->code, 401,
             'by=user: a wrong password is refused by authentication (401)');
    # A directory that matches names without case (LDAP, Active Directory)
    # takes Carol and carol for one account: so does the limiter (two
    # htpasswd entries stand in for it here).
    ok t_cmp(join(' ', map { GET('/byuser/', username => $_, password => "$_-secret")->code }
                  qw(Carol carol CAROL carol)),
             '200 200 401 429', 'by=user: Carol and carol share one bucket (CAROL is no user)');
}

# --- by=env:hl_tenant (SetEnvIf X-Tenant) -----------------------------------------------------
ok t_cmp(codes('/byenv/', 3, 'X-Tenant' => 'acme'), '200 200 429', 'by=env: tenant acme gets 2');
ok t_cmp(codes('/byenv/', 2, 'X-Tenant' => 'initech'), '200 200', 'by=env: tenant initech has its own');
ok t_cmp(codes('/byenv/', 3), '200 200 429', 'by=env: no tenant falls back to the client address');
ok t_cmp(codes('/byenv/', 1, 'X-Tenant' => 'NOT valid!'), '429',
         'by=env: a header SetEnvIf does not accept: the address bucket');

# --- two HotLimitQuota lines in one section: both must admit, each counts apart
ok t_cmp(join(' ', map { GET('/twoq/', 'X-Account' => $_)->code } qw(a a a b c)),
         '200 200 429 200 429',
         'two quotas: account a gets 2 (its 3rd refused, not counted), the address 3 (c refused)');
{
    my $res = GET '/twoq/', 'X-Account' => 'd', Accept => 'application/json';
    ok t_cmp((hl_json($res) || {})->{route}, '/twoq', 'two quotas: the 429 names the section');
}
ok t_cmp(codes('/twoq2/', 3), '200 200 429',
         'two quotas with one key: each has its own counter (a shared one would refuse the 2nd)');
my $status = GET('/hotlimit-status?json')->content;
ok t_cmp($status =~ m{"/twoq#2"} ? 1 : 0, 1, 'two quotas: the second is listed on the status page as /twoq#2');

# --- by=global (hl_global vhost, addresses from a trusted proxy) -----------------------------------
Apache::TestRequest::module('hl_global');
ok t_cmp(join(' ', map { GET('/byglobal/', 'X-Forwarded-For' => "203.0.113.$_")->code } 1 .. 3),
         '200 200 200', 'by=global: three different clients share 3');
ok t_cmp(GET('/byglobal/', 'X-Forwarded-For' => '203.0.113.99')->code, 429,
         'by=global: a fourth client is rejected');
ok t_cmp(GET('/byglobal/')->code, 429, 'by=global: so is the proxy itself');
Apache::TestRequest::module('default');
