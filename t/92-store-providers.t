# HotLimitStore's providers (issue 28): a store is found by the scheme of
# its URL in a registry (ap_register_provider, group "hotlimit-store"), so
# an unknown scheme is refused at configtest with the list of those
# registered (shm, redis, rediss, unix, redis-sentinel: one line each);
# each provider parses its own settings, and a malformed
# redis-sentinel:// URL is refused naming the bad token. With no Sentinel
# answering, no master is known: HotLimitStoreFailure local decides, at
# once, and the outage is logged with that reason.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my @bad = (
    [ 'memcached://127.0.0.1:11211',
      qr/unknown store 'memcached' \(the stores are: redis, redis-cluster, redis-sentinel, rediss, rediss-cluster, shm, unix\)/,
      'an unknown scheme: the registry lists its stores' ],
    [ 'shm:big', qr/shm takes no settings: ':big'/, 'shm takes no settings' ],
    [ 'redis-sentinel://127.0.0.1:26379', qr/needs MASTER\@HOST:PORT/,
      'sentinel: no master name' ],
    [ 'redis-sentinel://@127.0.0.1:26379', qr/no MASTER name before '\@'/,
      'sentinel: an empty master name' ],
    [ 'redis-sentinel://my{m}@127.0.0.1:26379', qr/master name 'my\{m\}'/,
      'sentinel: a master name with braces' ],
    [ 'redis-sentinel://mymaster@', qr/no Sentinel HOST:PORT/,
      'sentinel: no Sentinels' ],
    [ 'redis-sentinel://mymaster@127.0.0.1:26379,127.0.0.2', qr/Sentinel '127\.0\.0\.2': needs HOST:PORT/,
      'sentinel: a Sentinel without a port, named' ],
    [ 'redis-sentinel://mymaster@127.0.0.1:26379,127.0.0.1:26x', qr/Sentinel '127\.0\.0\.1:26x': bad port/,
      'sentinel: a bad port, named' ],
    [ 'redis-sentinel://mymaster@127.0.0.1:70000', qr/Sentinel '127\.0\.0\.1:70000': bad port/,
      'sentinel: a port out of range' ],
    [ 'redis-sentinel://mymaster@127.0.0.1:26379/x1', qr/bad database number 'x1'/,
      'sentinel: a bad database number, named' ],
    [ 'redis-sentinel://mymaster@127.0.0.1:26379?prefix=a:', qr/unknown option '\?prefix=a:'/,
      'sentinel: an option it does not take' ],
    [ 'rediss-cluster://127.0.0.1:7000', qr/rediss-cluster:\/\/ \(TLS\) needs hiredis with SSL support/,
      'cluster: TLS refused, saying why' ],
    [ 'redis-cluster://127.0.0.1:7000/2', qr/no \/DB: a cluster has database 0 only/,
      'cluster: no database number' ],
    [ 'redis-cluster://127.0.0.1:7000,127.0.0.1', qr/node '127\.0\.0\.1': needs HOST:PORT/,
      'cluster: a seed without a port, named' ],
);
my @good = ('shm', 'redis://127.0.0.1:6379/2',
            'redis-sentinel://mymaster@127.0.0.1:26379',
            'redis-sentinel://u:p@ss@mymaster@127.0.0.1:26379,[::1]:26380,localhost:26381/3',
            'redis-cluster://u:pw@127.0.0.1:7000,[::1]:7001?prefix=shop:');

plan tests => 2 * @bad + @good + 5;

my $httpd = Apache::Test::vars('httpd');
sub configtest {
    my ($name, $store) = @_;
    my $t = HotLimitTable::Httpd->_new(name => $name, conf => "HotLimitStore $store\n");
    my $out = `$httpd -t -f $t->{conf_file} 2>&1`;
    t_debug($out);
    return ($? >> 8, $out);
}

my $i = 0;
for my $case (@bad) {
    my ($store, $re, $what) = @$case;
    my ($rc, $out) = configtest('prov-bad-' . $i++, $store);
    ok t_cmp($rc != 0 ? 1 : 0, 1, "$what: configtest fails");
    ok t_cmp($out =~ /HotLimitStore: bad store '\Q$store\E': / && $out =~ $re ? 1 : 0, 1,
             "... saying so ($store)");
}
for my $store (@good) {
    my ($rc, $out) = configtest('prov-good-' . $i++, $store);
    ok t_cmp($rc == 0 && $out =~ /Syntax OK/ ? 1 : 0, 1, "configtest accepts $store");
}

# No Sentinel answers (closed ports): the local counters decide.
my @closed = map { HotLimitTable::free_port() } 1 .. 2;
my $h = start_httpd(name => 'prov-nomaster', conf => <<"CONF");
HotLimitStore redis-sentinel://mymaster\@127.0.0.1:$closed[0],127.0.0.1:$closed[1]
<Location /q>
    HotLimitQuota 2/1m
</Location>
CONF
my $t0 = time;
ok t_cmp($h->codes('/q', 3), '200 200 429', 'no master known: the local counters limit');
ok t_cmp(time - $t0 < 2 ? 1 : 0, 1, '... without waiting');
ok t_cmp(scalar(grep { /HL00701: Redis store master mymaster \(Sentinels 127\.0\.0\.1:$closed[0],127\.0\.0\.1:$closed[1]\) unavailable \(no Sentinel names the master\)/ }
                $h->log_lines(0)), 1, 'the outage is logged once, saying no Sentinel names the master');

# A store shared with other servers and no HotLimitSecretFile: each server
# would hash client-sent key values under its own generated secret, and
# count them apart: said at startup (HL02052). With the file: not said.
ok t_cmp(scalar(grep { /HL02052/ } $h->log_lines(0)), 0,
         'HotLimitSecretFile set (shared): no HL02052');
my $ns = start_httpd(name => 'prov-nosecret', shared_secret => 0, conf => <<"CONF");
HotLimitStore redis://127.0.0.1:$closed[0]
CONF
ok t_cmp(scalar(grep { /HL02052: HotLimitStore redis is shared with other servers but no HotLimitSecretFile is set/ }
                $ns->log_lines(0)), 1,
         'a shared store without HotLimitSecretFile: a warning says keyed quotas are counted apart (HL02052)');
$ns->stop;
