# Route candidates of the quota table (spec 3): the exact route, then each
# parent down to the module root; the first named route wins; dotted names
# ("user.login") are the same route as "/user/login"; a path parameter
# (";jsessionid=...") is not part of a segment's name; the counter key is
# the matched route plus the client, so sub-URLs of a route share one
# bucket per client.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLTest qw(hl_raw);
use IO::Socket::INET ();
use JSON::PP ();

plan tests => 34, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();

# X-Forwarded-For from 127.0.0.1 names the client, for a second client key.
# /ka/a, /ka/b and /kr are files: requests for them are not redirected to
# the FallbackResource, so the connection's kept answer is the one asked.
my $h = start_httpd(name => 'candidates',
    files => { 'ka/a' => "a\n", 'ka/b' => "b\n", 'kr' => "kr\n" },
    table => { routes => {
        'user.login'   => { max => 2, window => 60 },
        '/user'        => { limits => ['4/1m'] },
        '/api/v1/chat' => { max => 1, window => '60s' },
        '/j/login'     => { max => 2, window => 60 },
        '/ka/a'        => { max => 2, window => 60 },
        '/ka/b'        => { max => 3, window => 60 },
        '/kr'          => { max => 2, window => 60 },
    }, exempt => ['203.0.113.99'] }, conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
RemoteIPHeader X-Forwarded-For
RemoteIPTrustedProxy 127.0.0.1
<Location /kh>
    HotLimitQuota 2/1m by=header:X-Api-Key
</Location>
CONF

# The responses to requests sent one after the other on one keep-alive
# connection: GET of each path in @$paths, with header line $hdr->($i).
sub pipelined {
    my ($paths, $hdr) = @_;
    my $req = '';
    for my $i (0 .. $#$paths) {
        $req .= "GET $paths->[$i] HTTP/1.1\r\nHost: localhost\r\n"
              . ($hdr ? $hdr->($i) : '')
              . ($i == $#$paths ? "Connection: close\r\n" : '') . "\r\n";
    }
    return split m{(?=^HTTP/1\.1 )}m, hl_raw($h->port, $req) // '';
}

# Their status codes, as one string.
sub one_connection {
    return join ' ', map { m{^HTTP/1\.1 (\d{3})} ? $1 : () } pipelined(@_);
}

# The connection keeps its client's last counter, found again by its key:
# two routes (and two API keys) of the same length in turn on one
# connection are still two counters, each exact.
ok t_cmp(one_connection([qw(/ka/a /ka/b /ka/a /ka/b /ka/a /ka/b /ka/b)]),
         '200 200 200 200 429 200 429',
         "[$mpm] one connection, /ka/a (2) and /ka/b (3) in turn: counted apart");
# The connection keeps the table's answer for the path it was last asked:
# it is asked again for another client behind the proxy (the table's
# exempt list names 203.0.113.99, not .98) ...
{
    my @xff = qw(203.0.113.98 203.0.113.99 203.0.113.98);
    my @res = pipelined([('/ka/a') x 3], sub { "X-Forwarded-For: $xff[$_[0]]\r\n" });
    ok t_cmp(join(' ', map { /^ratelimit-policy:/mi ? 'limited' : 'exempt' } @res),
             'limited exempt limited',
             "[$mpm] one connection, clients .98 .99 .98: the exempt .99 is exempt");
}
# ... and after the table changes: a reload on a connection held open.
{
    my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->port,
                                     Timeout => 10) or die "connect: $!";
    my $ask = sub {
        print {$sock} "GET /kr HTTP/1.1\r\nHost: localhost\r\n\r\n";
        my $buf = '';
        $buf .= $_ while $buf !~ /\r\n\r\n/ && defined($_ = <$sock>);
        my ($len) = $buf =~ /^Content-Length: (\d+)/mi;
        read($sock, my $body, $len // 0);
        my ($q) = $buf =~ /^RateLimit-Policy: "[^"]*";q=(\d+)/mi;
        return $q // '-';
    };
    my $before = $ask->();
    my $gen = $h->generation;
    HotLimitTable::write_table($h->table_path, { routes => {
        %{ JSON::PP::decode_json(do { local (@ARGV, $/) = ($h->table_path); <> })->{routes} },
        '/kr' => { max => 5, window => 60 } }, exempt => ['203.0.113.99'] });
    $h->wait_generation($gen, 5);
    ok t_cmp("$before " . $ask->(), '2 5',
             "[$mpm] one connection across a reload: /kr's quota 2, then the new 5");
    close $sock;
}

my @keys = qw(k1 k2 k1 k2 k1 k2);
ok t_cmp(one_connection([('/kh/') x 6], sub { "X-Api-Key: $keys[$_[0]]\r\n" }),
         '200 200 200 200 429 429',
         "[$mpm] one connection, by=header keys k1 and k2 in turn: 2 each");

# /user/login/sms: no such route, its parent /user/login (written
# "user.login" in the table) wins over the root /user.
my $res = $h->get('/user/login/sms');
ok t_cmp($res->code, 200, "[$mpm] /user/login/sms admitted");
ok t_cmp($res->header('X-HL-Route'), '/user/login', "[$mpm] /user/login/sms matches /user/login (HOTLIMIT_ROUTE)");
ok t_cmp($res->header('RateLimit-Policy'), '"2/1m";q=2;w=60', "[$mpm] ... and its RateLimit-Policy (2/60s)");
ok t_cmp($res->header('X-HL-Remaining'), '1', "[$mpm] ... one left");

# Another sub-URL of /user/login shares the bucket; then the exact route
# and a grandchild are rejected.
$res = $h->get('/user/login/code');
ok t_cmp($res->code, 200, "[$mpm] /user/login/code admitted");
ok t_cmp($res->header('X-HL-Remaining'), '0', "[$mpm] ... from the same bucket (0 left)");
$res = $h->get('/user/login');
ok t_cmp($res->code, 429, "[$mpm] /user/login (exact) rejected: same bucket");
ok t_cmp($res->header('RateLimit-Policy'), '"2/1m";q=2;w=60', "[$mpm] ... by the /user/login quota");
ok t_cmp($h->codes('/user/login/sms/verify', 1), '429', "[$mpm] /user/login/sms/verify (grandchild) rejected too");
ok t_cmp($h->codes('/user//login/', 1), '429', "[$mpm] /user//login/ is /user/login");

# The counter key is route + client: one slot for all those URLs.
my ($key) = grep { $_->{key} eq '/user/login|127.0.0.1' } @{ $h->status->{top_keys} };
ok t_cmp($key && $key->{count}, 2, "[$mpm] one counter '/user/login|127.0.0.1' holding 2");
ok t_cmp(scalar(grep { $_->{key} =~ m{^/user/login/} } @{ $h->status->{top_keys} }), 0,
         "[$mpm] no counter per sub-URL");

# Another client has its own bucket on the same route.
$res = $h->get('/user/login/sms', 'X-Forwarded-For' => '203.0.113.7');
ok t_cmp($res->code, 200, "[$mpm] another client (203.0.113.7) admitted on /user/login");
ok t_cmp($res->header('X-HL-Remaining'), '1', "[$mpm] ... from its own bucket");
($key) = grep { $_->{key} eq '/user/login|203.0.113.7' } @{ $h->status->{top_keys} };
ok t_cmp($key && $key->{count}, 1, "[$mpm] its counter is '/user/login|203.0.113.7'");

# /user/profile: only the module root /user is named.
$res = $h->get('/user/profile');
ok t_cmp($res->code, 200, "[$mpm] /user/profile admitted although /user/login is exhausted");
ok t_cmp($res->header('X-HL-Route'), '/user', "[$mpm] /user/profile matches the root /user");
ok t_cmp($res->header('RateLimit-Policy'), '"4/1m";q=4;w=60', "[$mpm] ... with its policy (4/60s)");
ok t_cmp($h->codes('/user/profile/edit', 1) . ' ' . $h->codes('/user', 2) . ' ' . $h->codes('/user/x', 1),
         '200 200 200 429', "[$mpm] /user/profile/edit, /user, /user/x share the /user bucket (4)");

# Unmatched routes: no quota, no RateLimit headers.
$res = $h->get('/other');
ok t_cmp($res->code, 200, "[$mpm] /other admitted");
ok t_cmp($res->header('RateLimit-Policy'), undef, "[$mpm] /other: no RateLimit-Policy");
ok t_cmp($res->header('RateLimit'), undef, "[$mpm] /other: no RateLimit");
ok t_cmp($res->header('X-HL-Route'), undef, "[$mpm] /other: no HOTLIMIT_ROUTE");
ok t_cmp($h->codes('/other', 6), '200 200 200 200 200 200', "[$mpm] /other never limited");
ok t_cmp($h->get('/users/login')->header('X-HL-Route'), undef,
         "[$mpm] /users/login is not under /user (segments, not prefixes)");

# A three-segment route; its parents are not routes.
ok t_cmp($h->get('/api/v1/chat/stream')->header('X-HL-Route'), '/api/v1/chat',
         "[$mpm] /api/v1/chat/stream matches /api/v1/chat");
ok t_cmp($h->get('/api/v1')->header('X-HL-Route'), undef, "[$mpm] /api/v1 (a parent) matches nothing");

# Path parameters: a servlet container behind mod_proxy routes
# /j/login;jsessionid=A as /j/login and /j/x/..;y/login as /j/login too
# (httpd takes "..;y" for a name): both count against /j/login.
$res = $h->get('/j/login;jsessionid=A');
ok t_cmp($res->header('X-HL-Route'), '/j/login', "[$mpm] /j/login;jsessionid=A matches /j/login");
ok t_cmp($h->get('/j/x/..;y/login')->header('X-HL-Route'), '/j/login',
         "[$mpm] /j/x/..;y/login matches /j/login");
ok t_cmp($h->codes('/j/login;z', 1), '429', "[$mpm] ... and the third, /j/login;z, is refused");
$h->stop;
