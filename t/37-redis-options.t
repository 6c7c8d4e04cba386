# HotLimitStore redis:// options against a real redis-server: a password
# (AUTH), an ACL user, a database number, a key prefix and a unix socket;
# a wrong password is a store failure (HotLimitStoreFailure applies, the
# outage is logged), and rediss:// is refused at configtest with a reason.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use File::Path ();
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

my $redis_server = -x '/usr/bin/redis-server' ? '/usr/bin/redis-server' : '';
my $redis_cli = -x '/usr/bin/redis-cli' ? '/usr/bin/redis-cli' : '';
plan tests => 10, need { 'redis-server (apt-get install redis-server)' => $redis_server && $redis_cli };

my $rport = free_port();
my $rdir = Apache::Test::vars('t_logs') . "/redis-opt-" . hl_mpm() . "-$$";
File::Path::mkpath($rdir);
my $sock = "$rdir/redis.sock";
system($redis_server, '--port', $rport, '--bind', '127.0.0.1', '--save', '',
       '--appendonly', 'no', '--daemonize', 'yes', '--dir', $rdir,
       '--pidfile', "$rdir/redis.pid", '--logfile', "$rdir/redis.log",
       '--unixsocket', $sock, '--unixsocketperm', '700',
       '--requirepass', 's3cret') == 0 or die "cannot start redis-server\n";
sub cli { my $out = `$redis_cli -p $rport -a s3cret --no-auth-warning @_ 2>&1`; chomp $out; $out }
wait_until(sub { cli('ping') =~ /PONG/ }, 10) or die "redis-server does not answer\n";
END {
    my $pid = HotLimitTable::_slurp("$rdir/redis.pid");
    if ($pid) { chomp $pid; kill 'TERM', $pid }
}
cli('ACL', 'SETUSER', 'hl', 'on', '">hlpass"', "'~app:*'", '+evalsha', '+eval', '+del', '+get', '+set', '+time', '+select', '+ping');

sub server {
    my ($name, $store) = @_;
    return start_httpd(name => $name, conf => <<"CONF");
HotLimitStore $store
<Location /q>
    HotLimitQuota 2/1m
</Location>
CONF
}

# A password, database 3, a prefix.
my $h = server('redis-auth', "redis://:s3cret\@127.0.0.1:$rport/3?prefix=app:");
ok t_cmp($h->codes('/q', 3), '200 200 429', 'AUTH with a password: 2/1m enforced');
ok t_cmp(cli('-n', 3, '--scan', '--pattern', "'app:{hl}:*'") =~ /app:\{hl\}:d0\/q/ ? 1 : 0, 1,
         'the counter is in database 3 under the prefix app:');
ok t_cmp(cli('-n', 0, '--scan', '--pattern', "'*{hl}*'"), '', '... and not in database 0');

# An ACL user limited to its prefix.
my $u = server('redis-acl', "redis://hl:hlpass\@127.0.0.1:$rport?prefix=app:u:");
ok t_cmp($u->codes('/q', 3), '200 200 429', 'AUTH with an ACL user: 2/1m enforced');
ok t_cmp(scalar(grep { /HL00701/ } $u->log_lines(0)), 0, '... with no store failure');

# The unix socket.
my $x = server('redis-unix', "unix:$sock?password=s3cret&prefix=sock:");
ok t_cmp($x->codes('/q', 3), '200 200 429', 'a unix socket: 2/1m enforced');
ok t_cmp(cli('--scan', '--pattern', "'sock:{hl}:*'") =~ /sock:/ ? 1 : 0, 1, '... counted in Redis');

# A wrong password: a failure, handled by HotLimitStoreFailure (local).
my $w = server('redis-wrong', "redis://:wrong\@127.0.0.1:$rport");
ok t_cmp($w->codes('/q', 3), '200 200 429', 'a wrong password: the local counters limit');
ok t_cmp(scalar(grep { /HL00701: .*AUTH refused/ } $w->log_lines(0)), 1,
         '... and the outage is logged with its reason');

# rediss:// is refused at configtest, saying why.
my $t = HotLimitTable::Httpd->_new(name => 'rediss', conf => "HotLimitStore rediss://127.0.0.1:6380\n");
my $httpd = Apache::Test::vars('httpd');
my $out = `$httpd -t -f $t->{conf_file} 2>&1`;
t_debug($out);
ok t_cmp($out =~ /HotLimitStore: bad store .rediss:.*TLS/ ? 1 : 0, 1,
         'rediss:// refused at configtest: no TLS in this hiredis');
