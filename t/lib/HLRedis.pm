package HLRedis;
# A private redis-server on loopback for the Redis store tests (t/36-redis.t,
# t/39-redis-status.t): no persistence, its files under t/logs, stopped when
# the test ends (also on die).
#
#   plan tests => N, need { 'redis-server (apt-get install redis-server)' => HLRedis::available() };
#   my $redis = HLRedis->new('redis');    # a free port, not started
#   $redis->start;                        # dies when it does not answer
#   my $v = $redis->cli('GET', "'hl:{hl}:d0/q|127.0.0.1'");
#   $redis->stop;
use strict;
use warnings FATAL => 'all';

use File::Path ();
use Apache::Test ();
use HotLimitTable ();

my $server = '/usr/bin/redis-server';
my $client = '/usr/bin/redis-cli';
my @started;

# Returns 1 if redis-server and redis-cli are installed.
sub available { -x $server && -x $client ? 1 : 0 }

# Returns the path of redis-cli.
sub client { $client }

# Returns a handle for a server on a free port, its directory named after
# $name under t/logs; extra redis-server arguments in @args.
sub new {
    my ($class, $name, @args) = @_;
    my $self = bless {
        port => HotLimitTable::free_port(),
        dir  => Apache::Test::vars('t_logs') . "/$name-" . HotLimitTable::hl_mpm() . "-$$",
        args => \@args,
    }, $class;
    File::Path::mkpath($self->{dir});
    push @started, $self;
    return $self;
}

# Returns a handle for a Sentinel on a free port (not started) watching
# the master named $master at 127.0.0.1:$mport: quorum 2, down after 1 s,
# failover timeout 5 s (t/91-sentinel.t).
sub sentinel {
    my ($class, $name, $master, $mport) = @_;
    my $self = $class->new($name);
    $self->{sentinel} = "sentinel monitor $master 127.0.0.1 $mport 2\n"
        . "sentinel down-after-milliseconds $master 1000\n"
        . "sentinel failover-timeout $master 5000\n";
    return $self;
}

sub port { $_[0]{port} }
sub dir  { $_[0]{dir} }

# Starts the server and waits until it answers PING (dies after 10 s).
sub start {
    my $self = shift;
    my $dir = $self->{dir};
    my @conf;
    if ($self->{sentinel}) {    # its file: Sentinel rewrites it
        HotLimitTable::_spew("$dir/sentinel.conf", $self->{sentinel});
        @conf = ("$dir/sentinel.conf", '--sentinel');
    }
    system($server, @conf, '--port', $self->{port}, '--bind', '127.0.0.1', '--save', '',
           '--appendonly', 'no', '--daemonize', 'yes', '--dir', $dir,
           '--pidfile', "$dir/redis.pid", '--logfile', "$dir/redis.log",
           @{ $self->{args} }) == 0
        or die "cannot start redis-server\n";
    HotLimitTable::wait_until(sub { $self->cli('ping') =~ /PONG/ }, 10)
        or die "redis-server does not answer\n";
    return $self;
}

# Stops the server (SIGTERM) and waits up to 10 s until it is gone.
sub stop {
    my $self = shift;
    my $pid = HotLimitTable::_slurp("$self->{dir}/redis.pid") // return;
    chomp $pid;
    kill 'TERM', $pid;
    HotLimitTable::wait_until(sub { !kill 0, $pid }, 10);
}

# Returns how many calls of the store's script INFO commandstats ($info,
# of one server) counts: each call reads the server's clock once (TIME),
# which the other scripts a server runs (the status view's publish,
# src/httpd/mod_hotlimit_fleet.c) do not; so these are decisions, counts,
# refunds and listings, not every EVAL.
sub script_calls {
    my ($info) = @_;
    return ($info =~ /^cmdstat_time:calls=(\d+)/m)[0] // 0;
}

# Returns the HotLimitSecretFile line every httpd sharing this server
# uses: servers that share a Redis store must share the secret, under
# which account keys are hashed (doc/redis.md). The file (32 bytes, 0600)
# is written once, in the server's directory.
sub secret_conf {
    my $self = shift;
    my $path = "$self->{dir}/shared.secret";
    unless (-f $path) {
        HotLimitTable::_spew($path, 'shared-redis-test-secret-' . ('s' x 16));
        chmod 0600, $path;
    }
    return "HotLimitSecretFile $path\n";
}

# Runs redis-cli against the server with @args (shell words: quote keys
# with braces or '|'); returns its output without the last newline.
sub cli {
    my ($self, @args) = @_;
    my $out = `$client -p $self->{port} @args 2>&1`;
    chomp $out;
    return $out;
}

END { $_->stop for @started }

1;
