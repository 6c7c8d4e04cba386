package HLTest;
# Helpers shared by the mod_hotlimit Apache::Test files (t/*.t):
# concurrent clients, raw requests, log files read from an offset,
# problem+json decoding, the httpd parent and its children.
use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IO::Socket::INET ();
use IO::Select ();
use JSON::PP ();
use Time::HiRes qw(time sleep);
use Apache::Test ();
use Apache::TestRequest ();

our @EXPORT = qw(
    hl_port hl_logs hl_access_log hl_error_log
    hl_hammer hl_raw hl_ab hl_tally
    hl_offset hl_lines_since hl_wait_lines hl_access_since
    hl_json hl_httpd_pid hl_children hl_server_up hl_php_module
    hl_at_once
);

# Returns the name Apache::Test knows this run's mod_php by, for
# need_module/have_module: Apache::Test names a loaded DSO after its file
# (libphp8.2.so: "mod_php8.2.c"), so the name follows the PHP version
# installed. "mod_php.c" (never loaded: the check fails, PHP tests skip)
# when this run loads no mod_php.
sub hl_php_module {
    my $mods = Apache::Test::config()->{modules} || {};
    my ($php) = sort grep { /^mod_php[\d.]*\.c$/ } keys %$mods;
    return $php // 'mod_php.c';
}

# Returns the port of the server the requests of Apache::TestRequest go to
# now (the default server, or the vhost selected with
# Apache::TestRequest::module).
sub hl_port {
    my $hp = Apache::TestRequest::hostport();
    my ($port) = $hp =~ /:(\d+)$/;
    return $port;
}

sub hl_logs       { Apache::Test::vars('t_logs') }
sub hl_access_log { hl_logs() . '/hl_access.log' }
sub hl_error_log  { hl_logs() . '/error_log' }

# Sends one raw request (the whole text, CRLFs included) to 127.0.0.1:$port
# and returns the whole response, or undef when the connection failed.
# The request should ask for "Connection: close" (or be HTTP/1.0).
sub hl_raw {
    my ($port, $request, $timeout) = @_;
    $timeout ||= 10;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                  Proto => 'tcp', Timeout => $timeout)
        or return undef;
    binmode $s;
    print {$s} $request;
    my $sel = IO::Select->new($s);
    my $buf = '';
    my $deadline = time + $timeout;
    while (time < $deadline && $sel->can_read($deadline - time)) {
        my $n = sysread($s, $buf, 65536, length $buf);
        last unless $n;
    }
    close $s;
    return $buf;
}

# Returns "ADMITTED REFUSED": how many of the lines (each starting with a
# status code, e.g. curl's -w output) say 200 and how many 429.
sub hl_tally {
    my %c;
    $c{(split ' ', $_)[0]}++ for @_;
    return ($c{200} // 0) . ' ' . ($c{429} // 0);
}

# Returns the status code of a raw response text, or 0.
sub _status_of {
    my $res = shift;
    return 0 unless defined $res && $res =~ m{^HTTP/\d\.\d (\d{3})};
    return $1;
}

# Runs $total GET requests for $path on 127.0.0.1:$port from $conc forked
# clients started together (each its own connection, HTTP/1.0), extra
# header lines in $headers (a string of "Name: value\r\n" lines).
# Returns a hash reference: status code => number of responses (0 counts
# failed connections).
sub hl_hammer {
    my %a = @_;
    my ($port, $path, $total, $conc) = @a{qw(port path total conc)};
    my $headers = $a{headers} || '';
    my @per = map { int($total / $conc) + ($_ < $total % $conc ? 1 : 0) }
              0 .. $conc - 1;
    pipe(my $go_r, my $go_w) or die "pipe: $!";
    my @kids;
    for my $i (0 .. $conc - 1) {
        pipe(my $r, my $w) or die "pipe: $!";
        my $pid = fork;
        die "fork: $!" unless defined $pid;
        if (!$pid) {
            close $r;
            close $go_w;
            sysread($go_r, my $dummy, 1);    # wait until every client exists
            my @codes;
            for (1 .. $per[$i]) {
                my $res = hl_raw($port, "GET $path HTTP/1.0\r\nHost: localhost\r\n"
                                 . $headers . "\r\n", 30);
                push @codes, _status_of($res);
            }
            print {$w} join(' ', @codes), "\n";
            close $w;
            require POSIX;
            POSIX::_exit(0);
        }
        close $w;
        push @kids, [$pid, $r];
    }
    close $go_r;
    close $go_w;    # EOF releases every client at once
    my %count;
    for my $k (@kids) {
        my $fh = $k->[1];
        my $line = <$fh>;
        close $fh;
        waitpid($k->[0], 0);
        $count{$_}++ for split ' ', ($line // '');
    }
    return \%count;
}

# Sends $n copies of the raw request $request to 127.0.0.1:$port at once,
# each on its own connection (all connected and written before any answer
# is read), and reads every answer (60 s at most). Returns a hash
# reference: status code => number of answers (0 counts connections that
# failed or got no answer).
sub hl_at_once {
    my ($port, $request, $n) = @_;
    require IO::Select;
    my (@socks, %buf, %count, %err);
    for (1 .. $n) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                      Proto => 'tcp', Timeout => 10);
        if (!$s) { $count{0}++; next }
        push @socks, $s;
    }
    print {$_} $request for @socks;
    # Closed as soon as answered: httpd's lingering close would hold a
    # worker until the client closes its side.
    my $sel = IO::Select->new(@socks);
    my $deadline = time + 60;
    while ($sel->count && time < $deadline) {
        for my $s ($sel->can_read(1)) {
            my $got = sysread($s, $buf{"$s"}, 65536, length($buf{"$s"} // ''));
            next if $got;
            $err{"$s"} = "$!" unless defined $got;
            $sel->remove($s);
            close $s;
        }
    }
    for my $s (@socks) {
        my ($code) = ($buf{"$s"} // '') =~ m{^HTTP/\d\.\d (\d{3})};
        $count{$code // ($err{"$s"} ? "0 ($err{\"$s\"})" : 0)}++;
    }
    return \%count;
}

# Runs ab (apache2-utils) with $total requests, $conc at a time, against
# http://127.0.0.1:$port$path. Returns (complete, non2xx, output), or ()
# when ab is not installed.
sub hl_ab {
    my %a = @_;
    my $ab = '';
    for my $dir (split /:/, $ENV{PATH} // '', -1) {
        if (-x "$dir/ab") { $ab = "$dir/ab"; last }
    }
    return () unless $ab;
    my $out = `$ab -q -n $a{total} -c $a{conc} -s 30 http://127.0.0.1:$a{port}$a{path} 2>&1`;
    my ($complete) = $out =~ /^Complete requests:\s+(\d+)/m;
    my ($non2xx) = $out =~ /^Non-2xx responses:\s+(\d+)/m;
    return ($complete // -1, $non2xx // 0, $out);
}

# Returns the size of $file now (0 if missing): lines appended later are
# read with hl_lines_since.
sub hl_offset {
    my $file = shift;
    return -s $file || 0;
}

# Returns the lines of $file after byte $offset, without newlines.
sub hl_lines_since {
    my ($file, $offset) = @_;
    open my $fh, '<', $file or return ();
    binmode $fh;
    seek $fh, $offset, 0;
    my @lines = <$fh>;
    close $fh;
    chomp @lines;
    return @lines;
}

# Polls $file until $pred->(@lines since $offset) is true or $timeout
# seconds pass. Returns the lines seen last.
sub hl_wait_lines {
    my ($file, $offset, $pred, $timeout) = @_;
    my $deadline = time + ($timeout || 5);
    my @lines;
    while (1) {
        @lines = hl_lines_since($file, $offset);
        return @lines if $pred->(@lines) || time > $deadline;
        sleep 0.05;
    }
}

# Returns the access log records (hash references: path status pid tid
# rem route limit limited) written since $offset for paths matching $re,
# waiting up to 5 s until at least $want of them are there.
sub hl_access_since {
    my ($offset, $re, $want) = @_;
    my $parse = sub {
        my @recs;
        for (@_) {
            my @f = split /\t/;
            next unless @f >= 8 && $f[0] =~ $re;
            my %r = (path => $f[0], status => $f[1], pid => $f[2], tid => $f[3]);
            for (@f[4 .. 7]) { my ($k, $v) = split /=/, $_, 2; $r{$k} = $v }
            push @recs, \%r;
        }
        return @recs;
    };
    my @lines = hl_wait_lines(hl_access_log(), $offset,
                              sub { $parse->(@_) >= ($want || 0) }, 5);
    return $parse->(@lines);
}

# Returns the decoded JSON body of $res, or undef if it is not JSON.
sub hl_json {
    my $res = shift;
    my $v = eval { JSON::PP->new->utf8->decode($res->content) };
    return $v;
}

# Returns the pid of the httpd parent.
sub hl_httpd_pid {
    open my $fh, '<', hl_logs() . '/httpd.pid' or return undef;
    my $pid = <$fh>;
    close $fh;
    chomp $pid if defined $pid;
    return $pid;
}

# Returns the pids of the processes whose parent is $ppid.
sub hl_children {
    my $ppid = shift;
    my @kids;
    opendir my $dh, '/proc' or return ();
    for my $pid (grep { /^\d+$/ } readdir $dh) {
        open my $fh, '<', "/proc/$pid/stat" or next;
        my $stat = <$fh>;
        close $fh;
        next unless defined $stat && $stat =~ /\)\s+\S\s+(\d+)/;
        push @kids, $pid if $1 == $ppid;
    }
    closedir $dh;
    return @kids;
}

# Returns 1 if the server on $port answers a GET of an unlimited page.
sub hl_server_up {
    my $port = shift;
    my $res = hl_raw($port, "GET /hl-free/ HTTP/1.0\r\nHost: localhost\r\n\r\n", 5);
    return _status_of($res) == 200 ? 1 : 0;
}

1;
