# The status handler's scope (HotLimitStatus): it answers only where the
# server configuration says HotLimitStatus On (a tenant's .htaccess
# "SetHandler hotlimit-status" gets 404, and HotLimitStatus itself is not
# allowed there); it refuses a Host that is not a name of the server on
# every method (DNS rebinding); every answer forbids framing; it is never
# limited or banned; a virtual host's page (HotLimitStatus On inside its
# <VirtualHost>) shows and resets only its own counters; the main server's
# page, and the page the main server's configuration enables for every
# virtual host, all of them.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET POST);
use HLTest;

plan tests => 25;

Apache::TestRequest::module('default');

# --- .htaccess cannot enable it ------------------------------------------------
my $res = GET '/tenant-status/';
ok t_cmp($res->code, 404, '.htaccess SetHandler hotlimit-status (AllowOverride FileInfo): 404');
ok t_cmp($res->content =~ /mod_hotlimit status|"slots"/ ? 1 : 0, 0, '... and no status page in the body');
ok t_cmp(GET('/tenant-status-on/')->code, 500,
         '.htaccess HotLimitStatus On (even AllowOverride All): not allowed, 500');

# --- Host ------------------------------------------------------------------------
$res = GET '/hotlimit-status?json', Host => 'evil.example';
ok t_cmp($res->code, 421, 'GET ?json with Host: evil.example: 421');
ok t_cmp($res->content =~ /"slots"/ ? 1 : 0, 0, '... without the JSON');
ok t_cmp(GET('/hotlimit-status?metrics', Host => 'evil.example:' . hl_port())->code, 421,
         'GET ?metrics with Host: evil.example:PORT: 421');
ok t_cmp(GET('/hotlimit-status', Host => 'rebound.example')->code, 421, 'GET the HTML page: 421');
ok t_cmp(POST('/hotlimit-status', Host => 'evil.example', content => [ reset => '127.0.0.1' ])->code,
         421, 'POST reset with a foreign Host: 421');
ok t_cmp(GET('/hotlimit-status?json', Host => '127.0.0.1:' . hl_port())->code, 200,
         'an IP literal Host: 200');
ok t_cmp(GET('/hotlimit-status?json', Host => 'localhost')->code, 200, 'Host: localhost: 200');

# --- anti-framing headers on every answer -------------------------------------
$res = GET '/hotlimit-status';
ok t_cmp($res->code, 200, 'the page: 200');
ok t_cmp($res->header('Content-Security-Policy') // '', "frame-ancestors 'none'",
         "Content-Security-Policy: frame-ancestors 'none'");
ok t_cmp($res->header('X-Frame-Options') // '', 'DENY', 'X-Frame-Options: DENY');
$res = GET '/hotlimit-status?json', Host => 'evil.example';
ok t_cmp($res->header('Content-Security-Policy') // '', "frame-ancestors 'none'",
         '... on the 421 too');

# --- a virtual host's page: its own counters only -----------------------------
ok t_cmp(join(' ', map { GET('/stscope-m/')->code } 1 .. 2), '200 429',
         'main server: /stscope-m at its limit');
Apache::TestRequest::module('hl_stscope');
ok t_cmp(join(' ', map { GET('/stscope-v/')->code } 1 .. 2), '200 429',
         'vhost: /stscope-v at its limit (1 refusal of the 2 its ban allows)');
# Status requests are never limited: the vhost's "<Location /> 3/1m" would
# refuse the 4th.
my @codes = map { GET('/hotlimit-status?json')->code } 1 .. 5;
ok t_cmp("@codes", '200 200 200 200 200', 'vhost: 5 status requests under a 3/1m Location /: never limited');
my $v = hl_json(GET('/hotlimit-status?json')) || {};
my @vkeys = map { $_->{key} } @{ $v->{limited_keys} || [] }, @{ $v->{top_keys} || [] };
my ($own) = grep { m{/stscope-v\|127\.0\.0\.1$} } @vkeys;
ok t_cmp($own // '', qr{^[^/]+:\d+/stscope-v\|127\.0\.0\.1$},
         'vhost page: lists its own /stscope-v key, after its host:port tag');
my ($tag) = ($own // 'none') =~ m{^([^/]+:\d+)/};
ok t_cmp(join(',', grep { substr($_, 0, length $tag) ne $tag || substr($_, length $tag) =~ /^\d/ } @vkeys), '',
         "vhost page: no key without its tag $tag (another server's)");
my $reset = POST('/hotlimit-status', content => [ reset => '/stscope-m|127.0.0.1' ]);
ok t_cmp($reset->code, 403, "vhost page: resetting the main server's key is refused");
Apache::TestRequest::module('default');
ok t_cmp(GET('/stscope-m/')->code, 429, '... the main server\'s counter is untouched');
my $m = hl_json(GET('/hotlimit-status?json')) || {};
my @mkeys = map { $_->{key} } @{ $m->{limited_keys} || [] };
ok t_cmp(join(' ', map { my $re = $_; scalar grep { $_ =~ $re } @mkeys } (qr{^/stscope-m\|}, qr{^\Q$tag\E/stscope-v\|})),
         '1 1', "main server's page: both servers' keys");
# Another virtual host (hl_tpl) only inherits the main server's
# <Location /hotlimit-status>: that page is the main configuration's.
Apache::TestRequest::module('hl_tpl');
my $t = hl_json(GET('/hotlimit-status?json')) || {};
my @tkeys = map { $_->{key} } @{ $t->{limited_keys} || [] };
ok t_cmp(join(' ', map { my $re = $_; scalar grep { $_ =~ $re } @tkeys } (qr{^/stscope-m\|}, qr{^\Q$tag\E/stscope-v\|})),
         '1 1', "a vhost reaching the page the main configuration enables: every server's keys");
Apache::TestRequest::module('default');

# --- a banned address reaches the status page and lifts its ban ----------------
Apache::TestRequest::module('hl_stscope');
GET('/stscope-v/');      # the 2nd refusal: banned for 30 s
ok t_cmp(join(' ', GET('/ban-free/')->code, GET('/hotlimit-status?json')->code), '429 200',
         'banned from the vhost, yet its status page answers');
$reset = POST('/hotlimit-status', content => [ reset => '127.0.0.1' ]);
ok t_cmp($reset->code . ' ' . ((hl_json($reset) || {})->{removed} // 0 ? 'removed' : 'none')
         . ' ' . GET('/ban-free/')->code, '200 removed 200',
         'the banned address POSTs reset=ADDRESS there: lifted, admitted again');
Apache::TestRequest::module('default');
