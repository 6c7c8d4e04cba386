# norm= (spec section 2.1): a key value is folded before it is hashed, so
# the spellings an application reads as one account or one phone number
# are one key. An SMS endpoint keyed by the phone number (norm=digits)
# sends one SMS to a number however it is spelled and from however many
# addresses; norm=email drops a +tag; norm=exact keeps case; the default
# (lower) trims and lowercases.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 9;

my $h = start_httpd(name => 'norm', conf => <<'CONF');
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Location /sms>
    HotLimitQuota 1/1m by=param:phone norm=digits
</Location>
<Location /mail>
    HotLimitQuota 1/1m by=param:email norm=email
</Location>
<Location /exact>
    HotLimitQuota 1/1m by=header:X-Key norm=exact
</Location>
<Location /lower>
    HotLimitQuota 1/1m by=header:X-Key
</Location>
CONF

my $ua = $h->{ua};
# POSTs a form to $path from address $ip; returns the status code.
sub post {
    my ($path, $ip, %form) = @_;
    return $ua->post($h->url($path), \%form, 'X-Forwarded-For' => $ip)->code;
}

ok t_cmp(join(' ', post('/sms', '198.51.100.1', phone => '+33 6 12 34 56 78'),
                   post('/sms', '198.51.100.2', phone => '0033612345678'),
                   post('/sms', '198.51.100.3', phone => '(+33) 6-12-34-56-78')),
         '200 429 429', 'one number in three spellings from three addresses: one SMS');
ok t_cmp(post('/sms', '198.51.100.4', phone => '+33 (0)6 12 34 56 78'), 429,
         '... nor with the trunk zero in parentheses');
ok t_cmp(post('/sms', '198.51.100.1', phone => '+44 20 7946 0000'), 200,
         'another number is another key');

ok t_cmp(join(' ', post('/mail', '198.51.100.1', email => 'Alice+promo@Example.org'),
                   post('/mail', '198.51.100.2', email => 'alice@example.org ')),
         '200 429', 'norm=email: a +tag and case make no new account');
ok t_cmp(post('/mail', '198.51.100.1', email => 'bob@example.org'), 200,
         'norm=email: another address is another key');

my $get = sub { $h->get($_[0], 'X-Key' => $_[1])->code };
ok t_cmp(join(' ', $get->('/exact', 'Abc'), $get->('/exact', 'abc')), '200 200',
         'norm=exact: keys differing in case are two keys');
ok t_cmp($get->('/exact', 'Abc'), 429, 'norm=exact: the same spelling is one key');
ok t_cmp(join(' ', $get->('/lower', 'Abc'), $get->('/lower', ' abc ')), '200 429',
         'default (lower): trimmed and lowercased, one key');
ok t_cmp($get->('/lower', 'xyz'), 200, 'default: another value is another key');
