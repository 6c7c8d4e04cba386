# One phone, one inbox, one login, however sent (issue 25 items 5, 6, 7;
# spec section 2.1, norm= and json:): a PHP SMS handler behind
# `HotLimitQuota 1/1m by=json:phone norm=digits:33` runs once for one
# number spelled national, international, full-width, Arabic-Indic,
# Extended Arabic-Indic, 00-prefixed, escaped and as JSON numbers from as
# many addresses; one Gmail inbox in dotted, googlemail, +tag, quoted and
# trailing-dot spellings is one key under norm=email; and a JSON login sent
# as text/plain, octet-stream, a vendor type or no type at all is keyed by
# its json: value (5 admitted of 60 from six addresses, not 6 x 5 = 30).
# The handlers are PHP scripts run as CGIs (php-cli, so under both MPMs):
# each json_decode()s php://stdin as an application decodes php://input,
# and logs what it got.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HTTP::Request;
use HotLimitTable;

my $php = -x '/usr/bin/php' ? '/usr/bin/php' : undef;
plan tests => 10, sub { $php ? 1 : (print("# no php-cli\n"), 0) };

my $mpm = hl_mpm();
my $handler = <<"PHP";
#!$php
<?php
\$in = json_decode(file_get_contents('php://stdin'), true);
\$v = is_array(\$in) ? (\$in['phone'] ?? \$in['email'] ?? \$in['user'] ?? '-') : '-';
file_put_contents(__DIR__ . '/runs', (string) \$v . "\\n", FILE_APPEND);
echo "Content-Type: text/plain\\r\\n\\r\\nsent\\n";
PHP
my @dirs = qw(sms mail login);
my %files = map { ("$_/send.cgi" => $handler) } @dirs;

my $h = start_httpd(name => 'fold', files => \%files, setup => sub {
        chmod 0755, map { $_[0]->dir . "/htdocs/$_/send.cgi" } @dirs;
    }, conf => hl_cgi_xff_conf() . <<"CONF");
<Location /sms>
    HotLimitQuota 1/1m by=json:phone norm=digits:33
</Location>
<Location /mail>
    HotLimitQuota 1/1m by=json:email norm=email
</Location>
<Location /login>
    HotLimitQuota 5/1m by=json:user
</Location>
CONF

my $ua = $h->{ua};
# POSTs $body to $path from address $ip with Content-Type $type (none when
# undef); returns the status code.
sub post {
    my ($path, $ip, $body, $type) = @_;
    my $req = HTTP::Request->new(POST => $h->url($path),
                                 ['X-Forwarded-For' => $ip,
                                  defined $type ? ('Content-Type' => $type) : ()],
                                 $body);
    return $ua->request($req)->code;
}
# The values the handler under htdocs/$dir got, in order.
sub runs {
    open my $fh, '<', $h->dir . "/htdocs/$_[0]/runs" or return ();
    chomp(my @l = <$fh>);
    return @l;
}

# --- one French mobile, +33 6 12 34 56 78, in nine spellings.
my @phone = (
    '"06 12 34 56 78"',                                   # national
    '"+33 6 12 34 56 78"',                                # international
    "\"\x{FF0B}\x{FF13}\x{FF13} \x{FF16} \x{FF11}\x{FF12} \x{FF13}\x{FF14} \x{FF15}\x{FF16} \x{FF17}\x{FF18}\"",
    "\"\x{0660}\x{0666} \x{0661}\x{0662} \x{0663}\x{0664} \x{0665}\x{0666} \x{0667}\x{0668}\"",  # Arabic-Indic
    "\"\x{06F0}\x{06F0}\x{06F3}\x{06F3}\x{06F6}\x{06F1}\x{06F2}\x{06F3}\x{06F4}\x{06F5}\x{06F6}\x{06F7}\x{06F8}\"",
    '"0033612345678"',
    '"\uff10\uff16\u0031\u0032\u0033\u0034\u0035\u0036\u0037\u0038"',  # escaped full-width
    '33612345678',                                        # a JSON number
    '3.3612345678e10',                                    # ... as a float
    '612345678',                                          # national without trunk
);
utf8::encode($_) for @phone;
my @codes = map { post('/sms/send.cgi', '198.51.100.' . (10 + $_), "{\"phone\": $phone[$_]}",
                       'application/json') } 0 .. $#phone;
ok t_cmp("@codes", join(' ', 200, (429) x $#phone),
         "[$mpm] one phone in ten spellings from ten addresses: one 200, then 429");
my @sms = runs('sms');
ok t_cmp(scalar @sms, 1, "[$mpm] ... the PHP SMS handler ran once (got '@sms')");
ok t_cmp(post('/sms/send.cgi', '198.51.100.10', '{"phone": "06 12 34 56 79"}', 'application/json'),
         200, "[$mpm] another number from the first address: 200");

# --- one Gmail inbox.
my @mail = ('alice@gmail.com', 'a.l.i.c.e@gmail.com', 'Alice@GoogleMail.com',
            'alice+sms@gmail.com', '\"alice\"@gmail.com', 'alice@gmail.com.',
            '\"a.lice+x\"@googlemail.com.');
@codes = map { post('/mail/send.cgi', '198.51.100.' . (30 + $_), "{\"email\": \"$mail[$_]\"}",
                    'application/json') } 0 .. $#mail;
ok t_cmp("@codes", join(' ', 200, (429) x $#mail),
         "[$mpm] one Gmail inbox in seven spellings: one 200, then 429");
ok t_cmp(scalar(() = runs('mail')), 1, "[$mpm] ... the handler ran once");
ok t_cmp(post('/mail/send.cgi', '198.51.100.30', '{"email": "a.lice@example.org"}', 'application/json'),
         200, "[$mpm] dots of another domain are kept: another inbox");

# --- a JSON login sent as anything but JSON: 60 tries, 6 addresses.
my @types = ('text/plain', undef, 'application/octet-stream', 'application/vnd.acme.login',
             'text/plain; charset=utf-8', 'application/x-www-form-urlencoded');
my %admitted;
for my $i (0 .. 59) {
    my $code = post('/login/send.cgi', '198.51.100.' . (50 + $i % 6),
                    qq({"user": "alice", "password": "guess$i"}), $types[$i % 6]);
    $admitted{$code}++;
}
ok t_cmp($admitted{200} // 0, 5, "[$mpm] a JSON login as text/plain, octet-stream, no type...: 5 of 60 admitted");
ok t_cmp($admitted{429} // 0, 55, "[$mpm] ... 55 refused");
ok t_cmp(scalar(() = runs('login')), 5, "[$mpm] ... the handler ran 5 times");
ok t_cmp(post('/login/send.cgi', '198.51.100.60', '{"user": "bob"}', 'text/plain'), 200,
         "[$mpm] another account: 200");
