# Client identity comes from mod_remoteip: behind a trusted proxy each
# X-Forwarded-For address has its own bucket; when the presenting client is
# not a trusted proxy, X-Forwarded-For is ignored and cannot split the
# bucket. IPv6 clients are grouped by HotLimitIPv6Prefix.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET POST);
use HLTest;

plan tests => 17;

# Resets KEY through the main server's status handler; returns 1 if a
# counter of that key existed. Keeps the vhost selected.
sub reset_key {
    my $key = shift;
    my $was = Apache::TestRequest::module();
    Apache::TestRequest::module('default');
    my $res = POST('/hotlimit-status', content => [ reset => $key ]);
    Apache::TestRequest::module($was);
    my $j = hl_json($res) || {};
    return ($j->{removed} // 0) > 0 ? 1 : 0;
}

sub codes {
    my ($path, $xff, $n) = @_;
    return join ' ', map { GET($path, defined $xff ? ('X-Forwarded-For' => $xff) : ())->code } 1 .. $n;
}

# --- trusted proxy 127.0.0.1 (hl_xff), /who 2/1m ------------------------------------
Apache::TestRequest::module('hl_xff');

# One keep-alive connection of the proxy carries two clients in turn: each
# request is counted for its own client, whatever the one before it was
# (the module keeps the last client's counter on the connection).
{
    my @xff = qw(203.0.113.50 203.0.113.50 203.0.113.51 203.0.113.50 203.0.113.51 203.0.113.51);
    my $req = '';
    for my $i (0 .. $#xff) {
        $req .= "GET /kawho/ HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: $xff[$i]\r\n"
              . ($i == $#xff ? "Connection: close\r\n" : '') . "\r\n";
    }
    my $res = hl_raw(hl_port(), $req) // '';
    my @codes = $res =~ m{^HTTP/1\.1 (\d{3})}mg;
    ok t_cmp("@codes", '200 200 200 429 200 429',
             'one connection, clients .50 .50 .51 .50 .51 .51: 2 each, counted per client');
}

# One keep-alive connection of the proxy carries one client: its counter
# is kept from its second request on the connection (not its first), and
# the third, found kept, is still counted in the same counter.
{
    my $req = '';
    for my $i (0 .. 3) {
        $req .= "GET /kawho/ HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 203.0.113.60\r\n"
              . ($i == 3 ? "Connection: close\r\n" : '') . "\r\n";
    }
    my $res = hl_raw(hl_port(), $req) // '';
    my @codes = $res =~ m{^HTTP/1\.1 (\d{3})}mg;
    ok t_cmp("@codes", '200 200 429 429',
             'one connection, client .60 four times: 2 admitted, then refused');
}

ok t_cmp(codes('/who/', '203.0.113.1', 3), '200 200 429', 'trusted proxy: client 203.0.113.1 gets 2');
ok t_cmp(codes('/who/', '203.0.113.2', 3), '200 200 429', 'trusted proxy: client 203.0.113.2 has its own bucket');
ok t_cmp(codes('/who/', '192.0.2.9, 203.0.113.3', 3), '200 200 429',
         'trusted proxy: a chain ending in 203.0.113.3 is its own client');
ok t_cmp(codes('/who/', undef, 3), '200 200 429', 'no X-Forwarded-For: the proxy itself is a client');
# The bucket is keyed by the forwarded address, in a vhost prefixed with its
# host:port: resetting that exact key (the status handler lives in the main
# server) frees it.
my $vh = Apache::TestRequest::hostport();
ok t_cmp(reset_key("$vh/who|203.0.113.1"), 1, "the key $vh/who|203.0.113.1 existed and was reset");
ok t_cmp(codes('/who/', '203.0.113.1', 1), '200', '203.0.113.1 admitted again after the reset');

# IPv6 through the trusted proxy, HotLimitIPv6Prefix 64, /v6who 2/1m.
ok t_cmp(codes('/v6who/', '2001:db8:1:2::1', 1), '200', 'IPv6 2001:db8:1:2::1 admitted');
ok t_cmp(codes('/v6who/', '2001:db8:1:2:ffff:ffff:ffff:fffe', 1), '200',
         'IPv6 2001:db8:1:2:ffff:... (same /64) admitted: second of the shared 2');
ok t_cmp(codes('/v6who/', '2001:db8:1:2::abcd', 1), '429', 'a third address of the same /64: rejected');
ok t_cmp(codes('/v6who/', '2001:db8:1:3::1', 2), '200 200', 'another /64 has its own bucket');

# HotLimitIPv6Prefix 128 (hl_v6full), /v6full 1/1m: every address is a client.
Apache::TestRequest::module('hl_v6full');
ok t_cmp(codes('/v6full/', '2001:db8:9:9::1', 2), '200 429', 'prefix 128: 2001:db8:9:9::1 gets 1');
ok t_cmp(codes('/v6full/', '2001:db8:9:9::2', 2), '200 429', 'prefix 128: ::2 of the same /64 is another client');

# --- untrusted presenter (hl_untrusted: RemoteIPTrustedProxy 10.9.9.9) --------------
Apache::TestRequest::module('hl_untrusted');
{
    my @c = map { GET('/whou/', 'X-Forwarded-For' => "203.0.113.$_")->code } 10 .. 13;
    ok t_cmp("@c", '200 200 429 429', 'untrusted X-Forwarded-For does not split the bucket');
    ok t_cmp(codes('/whou/', undef, 1), '429', 'a request without X-Forwarded-For shares it');
    my $vh = Apache::TestRequest::hostport();
    ok t_cmp(reset_key("$vh/whou|127.0.0.1"), 1, "the shared bucket is $vh/whou|127.0.0.1");
}
Apache::TestRequest::module('default');
