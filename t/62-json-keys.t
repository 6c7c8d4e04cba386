# Keys and routes from JSON request bodies (issue 20 item 1, spec sections
# 2 and 2.1): by=json:PATH and HotLimitRouteFrom json:PATH read the string
# or number at PATH of a JSON body (any type but a multipart form; a number as
# PHP's (string) of it), as PHP's json_decode gives
# it (the last of duplicate keys, keys compared unescaped), folded by norm=;
# a body that is not JSON, or has nothing there, is keyed by the client
# address and routed by its path. The body is read as for param: (spooled
# past HotLimitBodyMemory, 413 over HotLimitBodyLimit, handed on whole, not
# read for a banned client), and json: keys never feed a ban. The SMS
# recipe (conf-examples/sms-api.conf) sends one SMS to one number spelled
# three ways from three addresses. A CGI counts its runs and echoes the md5
# of the body it got.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Digest::MD5 qw(md5_hex);
use JSON::PP ();
use HotLimitTable;

plan tests => 45;

my $mpm = hl_mpm();
my $cgi = <<'SH';
#!/bin/sh
echo run >> "$(dirname "$SCRIPT_FILENAME")/runs"
printf 'Content-Type: text/plain\n\n'
printf 'route=%s\n' "${HOTLIMIT_ROUTE:--}"
printf 'md5=%s\n' "$(md5sum | cut -c1-32)"
SH
my @dirs = qw(sms mail api big small both ipq free);
my %files = map { ("$_/send.cgi" => $cgi) } @dirs;
my $cgi_modules = hl_cgi_conf();

my $h = start_httpd(name => 'json-keys', table => { routes => {
        '/login' => { max => 1, window => 60 },
    } }, files => \%files, setup => sub {
        chmod 0755, map { $_[0]->dir . "/htdocs/$_/send.cgi" } @dirs;
    }, conf => $cgi_modules . <<"CONF");
LogLevel info hotlimit:debug
HotLimitQuotaTable \@DIR\@/table.json
HotLimitReloadInterval 1
HotLimitBan 2/1m 30s
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Directory "\@DIR\@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
<Location /sms>
    HotLimitQuota 1/1m 5/1d by=json:phone norm=digits
</Location>
<Location /mail>
    HotLimitQuota 1/1m by=json:user.email norm=email
</Location>
<Location /api>
    HotLimitRouteFrom json:action
</Location>
<Location /big>
    HotLimitQuota 1/1m by=json:phone
</Location>
<Location /small>
    HotLimitBodyLimit 1000
    HotLimitQuota 5/1m by=json:phone
</Location>
<Location /both>
    HotLimitQuota 100/1m by=param:u
    HotLimitQuota 1/1m by=json:phone
</Location>
<Location /ipq>
    HotLimitQuota 1/1m
</Location>
CONF

my $ua = $h->{ua};

# POSTs $body to $path from address $ip (Content-Type JSON unless given);
# returns the HTTP::Response.
sub post {
    my ($path, $ip, $body, $type) = @_;
    return $ua->post($h->url($path), 'Content-Type' => $type // 'application/json',
                     'X-Forwarded-For' => $ip, Content => $body);
}
# ... the status codes of several such POSTs: [ip, body], ...
sub codes {
    my ($path, @reqs) = @_;
    return join ' ', map { post($path, @$_)->code } @reqs;
}
# Returns how many times the CGI under htdocs/$dir ran.
sub runs {
    open my $fh, '<', $h->dir . "/htdocs/$_[0]/runs" or return 0;
    my @l = <$fh>;
    return scalar @l;
}

# --- one number, three spellings, three addresses: one SMS.
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.1', '{"phone": "+33 6 12 34 56 78"}'],
                                ['198.51.100.2', '{"phone": "0033612345678"}'],
                                ['198.51.100.3', '{"phone": "(+33) 6-12-34-56-78"}']),
         '200 429 429', "[$mpm] one number in three spellings from three addresses: 200 429 429");
ok t_cmp(runs('sms'), 1, "[$mpm] ... the SMS handler ran once");
ok t_cmp(post('/sms/send.cgi', '198.51.100.1', '{"phone": "+44 20 7946 0000"}')->code, 200,
         "[$mpm] another number from the same address: 200");
ok t_cmp(post('/sms/send.cgi', '198.51.100.4',
              '{"phone": "+33 6 12 34 56 78"}', 'application/json; charset=UTF-8')->code, 429,
         "[$mpm] application/json; charset=UTF-8 is read too");
ok t_cmp(post('/sms/send.cgi', '198.51.100.4',
              '{"phone": "+33 6 12 34 56 78"}', 'application/vnd.api+json')->code, 429,
         "[$mpm] ... and application/vnd.api+json");

# --- a number value is its literal text, folded as a string would be.
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.5', '{"phone": 33612345679}'],
                                ['198.51.100.6', '{"phone": "336 123 456 79"}']),
         '200 429', "[$mpm] a JSON number is a phone: 33612345679 and \"336 123 456 79\" are one");

# --- duplicate keys: the last one, as json_decode takes it.
ok t_cmp(post('/sms/send.cgi', '198.51.100.7', '{"phone": "+441", "phone": "+442"}')->code, 200,
         "[$mpm] duplicate keys: admitted");
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.8', '{"phone": "+442"}'],
                                ['198.51.100.9', '{"phone": "+441"}']),
         '429 200', "[$mpm] ... it was keyed by the last (+442), not the first (+441)");

# --- a key spelled with an escape is the key.
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.10', '{"ph\\u006fne": "+443"}'],
                                ['198.51.100.11', '{"phone": "+443"}']),
         '200 429', "[$mpm] {\"ph\\u006fne\": ...} is keyed by phone");
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.12', '{"phone": "\\u002b\\u0034\\u0034\\u0034"}'],
                                ['198.51.100.13', '{"phone": "+444"}']),
         '200 429', "[$mpm] an escaped value is unescaped before it is folded");

# --- no phone, invalid JSON, another type: keyed by the client address.
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.20', '{"tel": "+445"}'],
                                ['198.51.100.20', '{"tel": "+446"}'],
                                ['198.51.100.21', '{"tel": "+445"}']),
         '200 429 200', "[$mpm] no phone: keyed by the address (1/1m each)");
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.22', '{"phone": "+447"'],
                                ['198.51.100.23', '{"phone": "+447"}'],
                                ['198.51.100.22', '{"phone": "+447"} x']),
         '200 200 429', "[$mpm] invalid JSON (unclosed, trailing bytes): keyed by the address, not the number");
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.24', '{"phone": "+448", "phone": null}'],
                                ['198.51.100.25', '{"phone": "+448"}']),
         '200 200', "[$mpm] a last duplicate that is null: no phone (the address)");
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.26', '[{"phone": "+449"}]'],
                                ['198.51.100.27', '{"phone": "+449"}']),
         '200 200', "[$mpm] a top-level array: no phone");
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.28', '{"phone": "+450"}', 'text/plain'],
                                ['198.51.100.29', '{"phone": "+450"}']),
         '200 429', "[$mpm] a JSON text sent as text/plain is read too (issue 25: php://input is)");
ok t_cmp(codes('/sms/send.cgi', ['198.51.100.30', 'phone=%2B451', 'application/x-www-form-urlencoded'],
                                ['198.51.100.30', 'phone=%2B452', 'application/x-www-form-urlencoded']),
         '200 429', "[$mpm] a form is no JSON: the address");

# --- a nested path.
ok t_cmp(codes('/mail/send.cgi', ['198.51.100.1', '{"user": {"email": "Alice+x@Example.org"}}'],
                                 ['198.51.100.2', '{"user": {"name": "a", "email": "alice@example.org"}}'],
                                 ['198.51.100.3', '{"email": "alice@example.org"}']),
         '200 429 200', "[$mpm] json:user.email norm=email: nested, one account; a top-level email is not it");
ok t_cmp(codes('/mail/send.cgi', ['198.51.100.4', '{"user": {"email": "bob@example.org"}, "user": {"name": "b"}}'],
                                 ['198.51.100.5', '{"user": {"email": "bob@example.org"}}']),
         '200 200', "[$mpm] ... a later \"user\" without email replaces the first: no account");

# --- HotLimitRouteFrom json:action.
my $res = post('/api/send.cgi', '198.51.100.1', '{"action": "login", "user": "u"}');
ok t_cmp($res->code, 200, "[$mpm] {\"action\": \"login\"}: admitted (the table's /login: 1/1m)");
ok t_cmp($res->content, qr/^route=\/login$/m, "[$mpm] ... routed to /login");
ok t_cmp(post('/api/send.cgi', '198.51.100.1', '{"action": "LOGIN"}')->code, 429,
         "[$mpm] {\"action\": \"LOGIN\"}: the same route, refused");
$res = post('/api/send.cgi', '198.51.100.1', '{"action": "other"}');
ok t_cmp($res->code . ' ' . post('/api/send.cgi', '198.51.100.1', '{"action": "other"}')->code,
         '200 200', "[$mpm] another action: not limited");
$res = post('/api/send.cgi', '198.51.100.1', '{"act": "login"}');
ok t_cmp($res->content, qr/^route=-$/m, "[$mpm] no action: the path's route (not in the table)");

# --- a 2 MB body with the field at its end: spooled, read, handed on.
my $big = '{"pad": "' . join('', map { chr(97 + $_ % 26) } 1 .. 2_000_000) . '", "phone": "+33700000001"}';
$res = post('/big/send.cgi', '198.51.100.1', $big);
ok t_cmp($res->code, 200, "[$mpm] a 2 MB JSON body: admitted");
ok t_cmp($res->content, qr/md5=\Q${\ md5_hex($big)}\E/, "[$mpm] ... the CGI got it byte for byte");
(my $big2 = $big) =~ s/"pad": "a/"pad": "b/;
ok t_cmp(post('/big/send.cgi', '198.51.100.2', $big2)->code, 429,
         "[$mpm] ... and the phone at its end was read: the same phone from another address is refused");
ok t_cmp(runs('big'), 1, "[$mpm] ... whose CGI never ran");

# --- over HotLimitBodyLimit: 413, the handler never runs.
$res = post('/small/send.cgi', '198.51.100.1', '{"phone": "+1", "pad": "' . ('z' x 2000) . '"}');
ok t_cmp($res->code, 413, "[$mpm] a JSON body over HotLimitBodyLimit 1000: 413");
ok t_cmp(runs('small'), 0, "[$mpm] ... the CGI never ran");
ok t_cmp(post('/small/send.cgi', '198.51.100.1', '{"phone": "+1"}')->code, 200,
         "[$mpm] a JSON body under the limit: 200");
ok t_cmp(runs('small'), 1, "[$mpm] ... the CGI ran once");

# --- a param: key and a json: key on one request: the body is read once and
# handed on whole; the json: key is read from it.
my $both = '{"phone": "+33700000002", "u": "x"}';
$res = $ua->post($h->url('/both/send.cgi?u=q'), 'Content-Type' => 'application/json',
                 'X-Forwarded-For' => '198.51.100.1', Content => $both);
ok t_cmp($res->code, 200, "[$mpm] param: and json: keys on one request: admitted");
ok t_cmp($res->content, qr/md5=\Q${\ md5_hex($both)}\E/, "[$mpm] ... the CGI got the body whole");
ok t_cmp($ua->post($h->url('/both/send.cgi?u=r'), 'Content-Type' => 'application/json',
                   'X-Forwarded-For' => '198.51.100.2', Content => $both)->code, 429,
         "[$mpm] ... the json: key was read: the same phone is refused");

# --- json: refusals never ban; a banned client's body is not read.
ok t_cmp(codes('/sms/send.cgi', map { ['198.51.100.40', '{"phone": "+33600000040"}'] } 1 .. 4),
         '200 429 429 429', "[$mpm] one address refused three times by a json: key");
ok t_cmp($ua->get($h->url('/free/send.cgi'), 'X-Forwarded-For' => '198.51.100.40')->code, 200,
         "[$mpm] ... is not banned (HotLimitBan 2/1m counts only address keys)");
ok t_cmp(join(' ', map { $ua->get($h->url('/ipq/send.cgi'), 'X-Forwarded-For' => '198.51.100.41')->code } 1 .. 4),
         '200 429 429 429', "[$mpm] an address refused by an address quota");
my $off = -s $h->error_log;
ok t_cmp(post('/sms/send.cgi', '198.51.100.41', '{"phone": "+33600000041"}')->code, 429,
         "[$mpm] ... is banned: its JSON POST is refused");
ok t_cmp(scalar(grep { /HL01100/ } $h->log_lines($off)) ? 1 : 0, 1,
         "[$mpm] ... before its body is read (HL01100)");
ok t_cmp(post('/sms/send.cgi', '198.51.100.42', '{"phone": "+33600000041"}')->code, 200,
         "[$mpm] ... and its number was not counted");
$h->stop;

# --- the recipe: conf-examples/sms-api.conf.
my $examples = "$FindBin::Bin/../conf-examples";
$examples = "$ENV{HOTLIMIT_TEST_WORK}/conf-examples" unless -d $examples;
my $recipe = do { local (@ARGV, $/) = "$examples/sms-api.conf"; <> };
$recipe =~ s/^\s*LoadModule .*$//mg;
my $r = start_httpd(name => 'sms-recipe', files => { 'api/sms/send' => $cgi }, setup => sub {
        chmod 0755, $_[0]->dir . '/htdocs/api/sms/send';
    }, conf => $cgi_modules . $recipe . <<"CONF");
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Directory "\@DIR\@/htdocs/api/sms">
    Options +ExecCGI
    SetHandler cgi-script
</Directory>
CONF
my @sent = map { $r->{ua}->post($r->url('/api/sms/send'), 'Content-Type' => 'application/json',
                                'Accept' => '*/*', 'X-Forwarded-For' => $_->[0], Content => $_->[1]) }
    ['203.0.113.1', '{"phone": "+33 6 12 34 56 78"}'],
    ['203.0.113.2', '{"phone": "0033612345678"}'],
    ['203.0.113.3', '{"phone": "(+33) 6-12-34-56-78"}'],
    ['203.0.113.4', '{"phone": "06 12 34 56 78"}'];
ok t_cmp(join(' ', map { $_->code } @sent), '200 429 429 429',
         "[$mpm] sms-api.conf: one number in four spellings (one national, norm=digits:33) from four addresses sends one SMS");
ok t_cmp(scalar(() = do { open my $fh, '<', $r->dir . '/htdocs/api/sms/runs' or die $!; <$fh> }), 1,
         "[$mpm] sms-api.conf: ... the handler ran once");
ok t_cmp($sent[1]->header('Content-Type') // '', qr{^application/json},
         "[$mpm] sms-api.conf: Accept: */* gets a JSON 429");
my $doc = eval { JSON::PP::decode_json($sent[1]->content) } // {};
ok t_cmp($doc->{status} // '', 429, "[$mpm] sms-api.conf: ... a JSON object with status 429");
ok t_cmp($sent[0]->header('RateLimit-Policy') // '', qr/"1\/1m".*"10\/1h"/,
         "[$mpm] sms-api.conf: RateLimit-Policy names the number's and the address's windows");
