package HLCluster;
# A private Redis Cluster on loopback (issue 28): N masters, no replicas,
# each a redis-server (t/lib/HLRedis.pm) with its bus on a free port of its
# own, cluster-require-full-coverage no (a stopped master loses only its
# own slots); created with redis-cli --cluster create, stopped when the
# test ends (also on die; a SIGSTOPped master is continued first).
#
#   plan tests => N, need { 'redis-server' => HLRedis::available() };
#   my $cl = HLCluster->new('cluster', 3)->start;   # dies unless state ok
#   $cl->port(0);                                    # master 0's port
#   $cl->reshard(0, 2, 1000);    # 1000 slots from master 0 to master 2
#   $cl->pause(1); $cl->resume(1);                   # SIGSTOP / SIGCONT
#   $cl->stop;
use strict;
use warnings FATAL => 'all';

use HLRedis ();
use HotLimitTable ();

my @clusters;

# Returns a handle for $n masters (not started), named after $name.
sub new {
    my ($class, $name, $n) = @_;
    my @nodes;
    for my $i (0 .. $n - 1) {
        my $node = HLRedis->new("$name-$i", '--cluster-enabled', 'yes',
            '--cluster-port', HotLimitTable::free_port(),
            '--cluster-require-full-coverage', 'no',
            '--cluster-node-timeout', 2000);
        push @{ $node->{args} }, '--cluster-config-file', $node->dir . '/nodes.conf';
        push @nodes, $node;
    }
    my $self = bless { nodes => \@nodes, paused => {} }, $class;
    push @clusters, $self;
    return $self;
}

sub nodes { @{ $_[0]{nodes} } }
sub port  { $_[0]{nodes}[$_[1]]->port }
sub addr  { '127.0.0.1:' . $_[0]->port($_[1]) }

# Starts the masters, creates the cluster and waits until every master
# says cluster_state:ok (dies after 20 s). Returns $self.
sub start {
    my $self = shift;
    $_->start for $self->nodes;
    my @addrs = map { $self->addr($_) } 0 .. $#{ $self->{nodes} };
    my $out = `${\ HLRedis::client()} --cluster create @addrs --cluster-replicas 0 --cluster-yes 2>&1`;
    $? == 0 or die "redis-cli --cluster create failed:\n$out";
    HotLimitTable::wait_until(sub { $self->state_ok }, 20)
        or die "the cluster does not reach cluster_state:ok\n";
    return $self;
}

# Returns 1 if every master not paused says cluster_state:ok.
sub state_ok {
    my $self = shift;
    for my $i (0 .. $#{ $self->{nodes} }) {
        next if $self->{paused}{$i};
        return 0 unless $self->{nodes}[$i]->cli('cluster', 'info') =~ /cluster_state:ok/;
    }
    return 1;
}

# Returns master $i's node id.
sub id { $_[0]{nodes}[$_[1]]->cli('cluster', 'myid') }

# Returns the number of keys master $i holds.
sub dbsize { 0 + $_[0]{nodes}[$_[1]]->cli('dbsize') }

# Moves $slots slots from master $from to master $to with redis-cli
# --cluster reshard; returns its output (dies when it fails).
sub reshard {
    my ($self, $from, $to, $slots) = @_;
    my ($fid, $tid) = ($self->id($from), $self->id($to));
    my $out = `${\ HLRedis::client()} --cluster reshard ${\ $self->addr($from)} --cluster-from $fid --cluster-to $tid --cluster-slots $slots --cluster-yes 2>&1`;
    $? == 0 or die "redis-cli --cluster reshard failed:\n$out";
    return $out;
}

# Returns the pid of master $i.
sub pid {
    my ($self, $i) = @_;
    my $pid = HotLimitTable::_slurp($self->{nodes}[$i]->dir . '/redis.pid') // die "no pid\n";
    chomp $pid;
    return $pid;
}

# Stops (SIGSTOP) and continues (SIGCONT) master $i.
sub pause  { my ($s, $i) = @_; kill 'STOP', $s->pid($i); $s->{paused}{$i} = 1 }
sub resume { my ($s, $i) = @_; kill 'CONT', $s->pid($i); delete $s->{paused}{$i} }

# Continues any paused master and stops every one.
sub stop {
    my $self = shift;
    $self->resume($_) for keys %{ $self->{paused} };
    $_->stop for $self->nodes;
}

END { $_->stop for @clusters }

1;
