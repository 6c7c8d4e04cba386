package HotLimitTable;
# Helpers for the quota-table tests (t/2*.t). HotLimitQuotaTable is a
# main-server-only directive, so these tests do not use Apache::Test's own
# server: each starts private httpd instances (same httpd binary, same MPM
# and modules as the Apache::Test run) and, for URL tables, a tiny HTTP
# server of its own that serves the JSON table.
#
#   my $h = start_httpd(name => 'file', conf => "HotLimitQuotaTable ...");
#   my $res = $h->get('/a');                 # HTTP::Response (LWP)
#   my $line = $h->wait_log(qr/HL00404/, $offset, 3);
#   my $ts = table_server(body => '{...}');  # forked, 127.0.0.1, free port
#   $ts->set_mode('500'); $ts->set_body('{...}'); my @reqs = $ts->requests;
#
# Everything started here is stopped when the test ends (also on die).
# Only core Perl modules and LWP (which Apache::Test needs anyway).
use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use Cwd ();
use FindBin ();
use File::Path ();
use IO::Socket::INET ();
use JSON::PP ();
use POSIX ();
use Time::HiRes qw(time sleep);
use LWP::UserAgent ();
use Apache::Test ();
use Apache::TestUtil ();
use HLTest ();

our @EXPORT = qw(
    start_httpd table_server write_table free_port wait_until
    hl_mpm hl_other_mpm hl_have_php hl_json_encode elapsed_since
    hl_tls_conf hl_make_cert hl_cgi_conf hl_cgi_xff_conf
    hl_login_cgi hl_login_php
    hl_load_conf hl_clock_shim
);

# The HotLimitReloadInterval the tests use, and the spec's bound on how
# soon a change is in force: one interval plus one second.
our $INTERVAL = 1;
our $APPLY_WITHIN = $INTERVAL + 1;

my $creator = $$;        # only this process stops what it started
my @started;             # httpd instances and table servers, for END

# ---- small utilities --------------------------------------------------------

# Returns the configuration of a TLS virtual host on 127.0.0.1:$port
# (h2 and http/1.1, mod_ssl loaded if it is not) whose certificate
# hl_make_cert makes in the instance directory (\@DIR\@); $mods is httpd's
# module directory.
sub hl_tls_conf {
    my ($mods, $port) = @_;
    return <<"CONF";
<IfModule !socache_shmcb_module>
    LoadModule socache_shmcb_module $mods/mod_socache_shmcb.so
</IfModule>
<IfModule !ssl_module>
    LoadModule ssl_module $mods/mod_ssl.so
</IfModule>
Listen 127.0.0.1:$port
<VirtualHost 127.0.0.1:$port>
    Protocols h2 http/1.1
    SSLEngine on
    SSLCertificateFile \@DIR\@/cert.pem
    SSLCertificateKeyFile \@DIR\@/key.pem
</VirtualHost>
CONF
}

# Makes the self-signed certificate of hl_tls_conf in $dir (dies if
# openssl cannot).
sub hl_make_cert {
    my $dir = shift;
    system("openssl req -x509 -newkey rsa:2048 -nodes -keyout '$dir/key.pem' -out '$dir/cert.pem'"
           . " -days 2 -subj /CN=127.0.0.1 >/dev/null 2>&1") == 0
        or die "openssl could not make a certificate\n";
}

# Returns the MPM of this run ("prefork" or "event").
# Returns a CGI login script (Perl) for the device cookie tests: it reads
# u and p from the query and an urlencoded body, answers 303 to /home when
# p is the password of account u in $accounts (Perl source of a hash list,
# e.g. "alice => 'right'"), else 403. With $fold, u is lowercased first
# (a case-insensitive application); without, names are exact.
sub hl_login_cgi {
    my ($accounts, $fold) = @_;
    my $u = $fold ? "lc(\$p{u} // '')" : "\$p{u} // ''";
    return <<"PERL";
#!/usr/bin/perl
my \$body = '';
{ local \$/; \$body = <STDIN> // q(); }   # all of it (mod_cgid resets the answer of a CGI that leaves a chunked body unread)
my %p;
for (split /&/, (\$ENV{QUERY_STRING} // '') . "&\$body") {
    my (\$k, \$v) = split /=/, \$_, 2;
    next unless defined \$k && length \$k;
    \$v //= '';
    \$v =~ tr/+/ /;
    \$v =~ s/%([0-9a-fA-F]{2})/chr hex \$1/ge;
    \$p{\$k} = \$v;
}
my %pw = ($accounts);
my \$u = $u;
if (exists \$pw{\$u} && (\$p{p} // '') eq \$pw{\$u}) {
    print "Status: 303 See Other\\r\\nLocation: /home\\r\\nContent-Type: text/plain\\r\\n\\r\\nwelcome \$u\\n";
} else {
    print "Status: 403 Forbidden\\r\\nContent-Type: text/plain\\r\\n\\r\\nbad password\\n";
}
PERL
}

# Returns the same login as hl_login_cgi in PHP ($_REQUEST, as an
# application reads it); $accounts is PHP source of array entries, e.g.
# "'alice' => 'right'".
sub hl_login_php {
    my ($accounts, $fold) = @_;
    my $u = $fold ? "strtolower(\$_REQUEST['u'] ?? '')" : "\$_REQUEST['u'] ?? ''";
    return <<"PHP";
<?php
\$pw = [$accounts];
\$u = $u;
if (is_string(\$u) && isset(\$pw[\$u]) && (\$_REQUEST['p'] ?? '') === \$pw[\$u]) {
    header('Location: /home', true, 303);
    echo "welcome \$u\\n";
} else {
    http_response_code(403);
    echo "bad password\\n";
}
PHP
}

# Returns the configuration lines that load the module this MPM runs CGI
# scripts with (mod_cgi under prefork, mod_cgid under a threaded MPM), for
# a private instance's conf.
# Returns the lines that load each module NAME (mod_NAME.so, NAME_module)
# of @names unless it is loaded: hl_load_conf(qw(proxy proxy_http)).
sub hl_load_conf {
    my $mods = Apache::Test::vars('libexecdir') || '/usr/lib/apache2/modules';
    return join '', map { "<IfModule !${_}_module>\n    LoadModule ${_}_module "
                          . "$mods/mod_$_.so\n</IfModule>\n" } @_;
}

sub hl_cgi_conf {
    my $mods = Apache::Test::vars('libexecdir') || '/usr/lib/apache2/modules';
    return <<"CONF";
<IfModule mpm_prefork_module>
    LoadModule cgi_module $mods/mod_cgi.so
</IfModule>
<IfModule !mpm_prefork_module>
    LoadModule cgid_module $mods/mod_cgid.so
</IfModule>
CONF
}

# Returns hl_cgi_conf's lines, and config that runs every *.cgi under the
# instance's htdocs as a CGI and takes the client address from
# X-Forwarded-For sent by the test (127.0.0.1), so a test can speak from
# many addresses to CGI handlers.
sub hl_cgi_xff_conf {
    return hl_cgi_conf() . <<'CONF';
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
<Directory "@DIR@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
CONF
}

sub hl_mpm { $ENV{HOTLIMIT_TEST_MPM} || 'prefork' }

# Returns the base config (LoadModule lines) of this run's MPM.
sub _base_conf {
    my $mpm = shift || hl_mpm();
    my $work = $ENV{HOTLIMIT_TEST_WORK}
        or die "HOTLIMIT_TEST_WORK is not set (run t/run-httpd-tests.sh)\n";
    return "$work/base-$mpm.conf";
}

# Returns the other MPM's name if its base config exists in this run (the
# MPMs run one after the other: during the second, the first's is there),
# else this run's MPM.
sub hl_other_mpm {
    my $other = hl_mpm() eq 'prefork' ? 'event' : 'prefork';
    return -r _base_conf($other) ? $other : hl_mpm();
}

# Returns 1 if this run loads mod_php (prefork only).
sub hl_have_php {
    open my $fh, '<', _base_conf() or return 0;
    my $php = grep { /^\s*LoadModule\s+php_module\b/ } <$fh>;
    close $fh;
    return $php ? 1 : 0;
}

# Returns a TCP port on 127.0.0.1 that nothing listened on a moment ago.
# Returns a port no one listens on, picked at random below the kernel's
# ephemeral range (32768 and up here): the files of a pass run in parallel,
# and a port the kernel handed out as free could go to another file's
# outgoing connection before the server meant for it binds it.
sub free_port {
    for (1 .. 200) {
        my $port = 20000 + int(rand(12000));
        my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port,
                                      Listen => 1, ReuseAddr => 1, Proto => 'tcp')
            or next;
        close $s;
        return $port;
    }
    die "cannot find a free port between 20000 and 32000";
}

# Calls $pred every 50 ms until it returns true or $timeout seconds pass.
# Returns the last value of $pred.
sub wait_until {
    my ($pred, $timeout) = @_;
    my $deadline = time + ($timeout // 5);
    while (1) {
        my $v = $pred->();
        return $v if $v || time > $deadline;
        sleep 0.05;
    }
}

sub elapsed_since { sprintf '%.2f', time - $_[0] }

# Encodes a Perl structure as JSON (stable key order).
sub hl_json_encode { JSON::PP->new->canonical->encode($_[0]) }

# Writes $content (a string, or a structure encoded as JSON) to $path
# atomically (temporary file + rename) and gives it an mtime never seen
# before for that path, so the module's mtime/size check always notices.
my %last_mtime;
sub write_table {
    my ($path, $content) = @_;
    $content = hl_json_encode($content) if ref $content;
    my $tmp = "$path.tmp$$";
    open my $fh, '>', $tmp or die "cannot write $tmp: $!";
    print {$fh} $content;
    close $fh or die "cannot write $tmp: $!";
    my $t = int(time);
    $t = $last_mtime{$path} + 1 if $last_mtime{$path} && $t <= $last_mtime{$path};
    $last_mtime{$path} = $t;
    utime $t, $t, $tmp;
    rename $tmp, $path or die "cannot rename $tmp to $path: $!";
    return $path;
}

# ---- httpd instances -----------------------------------------------------------

# Starts a private httpd and returns its handle (HotLimitTable::Httpd).
# Options:
#   name     directory name under t/logs (made unique)
#   conf     directives appended to the generated config (a string);
#            "@DIR@" in it stands for the instance directory
#   table    if given, written to @DIR@/table.json before the start (a
#            string or a structure), e.g. for HotLimitQuotaTable @DIR@/table.json
#   files    { 'rel/path' => content } extra documents
#   env      { NAME => value } extra environment for httpd (LD_PRELOAD...)
#   mpm      prefork|event: another MPM than this run's (see hl_other_mpm)
#   setup    a sub called with the handle before the start, e.g. to put a
#            FIFO at the table path
#   timeout  seconds to wait until it answers (default 20)
#   clock    1: httpd runs under the test clock (t/support/clockshift.c),
#            stepped with ->pass_time and ->set_wall_offset
#   start    0: return the handle without starting it (call ->start)
# The config has: the LoadModule lines of this run's MPM, Listen on a free
# loopback port, everything under the instance directory, DocumentRoot
# with index.html (+ index.php and front.php when mod_php is loaded), a
# fallback so every URL is a 200, /hotlimit-status (not limited), response
# headers X-HL-Route / X-HL-Remaining from the module's variables, an
# access log with them, and HotLimitSlots 4096 / HotLimitPersist Off.
sub start_httpd {
    my %o = @_;
    my $h = HotLimitTable::Httpd->_new(%o);
    push @started, $h;
    $h->start unless defined $o{start} && !$o{start};
    return $h;
}

# Returns a table server (HotLimitTable::Server) with its directory under
# t/logs; started at once unless start => 0 (its port is chosen now either
# way, so an httpd can be pointed at it before it runs).
#   body  the document to serve (a string or a structure)
#   mode  ok (default) | 500 | hang | down | redirect (see set_redirect)
sub table_server {
    my %o = @_;
    my $s = HotLimitTable::Server->_new(%o);
    push @started, $s;
    $s->start unless defined $o{start} && !$o{start};
    return $s;
}

# Returns the path of the test clock's LD_PRELOAD shim
# (t/support/clockshift.c), built once per test file; dies if it cannot.
my $clock_so;
sub hl_clock_shim {
    return $clock_so if $clock_so;
    my $dir = _fresh_dir('clockshift');
    my $src = "$FindBin::Bin/support/clockshift.c";
    my $cc = $ENV{CC} || 'cc';
    system("$cc -shared -fPIC -o '$dir/clockshift.so' '$src' -ldl") == 0
        or die "cannot build the clock shim from $src\n";
    return $clock_so = "$dir/clockshift.so";
}

# Returns a fresh directory under t/logs named after $name.
my $seq = 0;
sub _fresh_dir {
    my $name = shift;
    my $logs = Apache::Test::vars('t_logs') || Cwd::getcwd() . '/logs';
    my $dir = sprintf '%s/hltable-%s-%s-%d-%d', $logs, $name, hl_mpm(), $$, ++$seq;
    File::Path::rmtree($dir) if -e $dir;
    File::Path::mkpath($dir);
    return $dir;
}

sub _slurp {
    my $path = shift;
    open my $fh, '<', $path or return undef;
    local $/;
    my $s = <$fh>;
    close $fh;
    return $s;
}

sub _spew {
    my ($path, $content) = @_;
    my $tmp = "$path.tmp$$";
    open my $fh, '>', $tmp or die "cannot write $tmp: $!";
    print {$fh} $content;
    close $fh or die "cannot write $tmp: $!";
    rename $tmp, $path or die "cannot rename $tmp: $!";
}

END {
    if ($$ == $creator) {
        my $status = $?;
        $_->stop for reverse @started;
        $? = $status;
    }
}

# Makes SIGINT/SIGTERM run the END block (stop what was started).
$SIG{INT} = $SIG{TERM} = sub { exit 1 };

# ============================================================================
package HotLimitTable::Httpd;
use strict;
use warnings FATAL => 'all';
use Time::HiRes qw(time sleep);
use JSON::PP ();

sub _new {
    my ($class, %o) = @_;
    my $self = bless { %o }, $class;
    $self->{name} ||= 'httpd';
    $self->{dir} = HotLimitTable::_fresh_dir($self->{name});
    $self->{port} = HotLimitTable::free_port();
    $self->{error_log} = "$self->{dir}/error_log";
    $self->{access_log} = "$self->{dir}/access_log";
    $self->{conf_file} = "$self->{dir}/httpd.conf";
    $self->{pid_file} = "$self->{dir}/httpd.pid";
    $self->{ua} = LWP::UserAgent->new(timeout => 10, keep_alive => 0,
                                      max_redirect => 0);
    $self->{conf} = '' unless defined $self->{conf};
    $self->{conf} =~ s/\@DIR\@/$self->{dir}/g;
    if ($self->{clock}) {
        $self->{clock_file} = "$self->{dir}/clock-offset";
        $self->{env} = { %{ $self->{env} || {} },
            LD_PRELOAD => join(' ', grep { $_ } $ENV{LD_PRELOAD}, HotLimitTable::hl_clock_shim()),
            HL_CLOCK_OFFSET_FILE => $self->{clock_file} };
        @$self{qw(clock_wall clock_mono)} = (0, 0);
        $self->_write_clock;
    }
    HotLimitTable::write_table($self->table_path, $self->{table})
        if defined $self->{table};
    $self->_write_site;
    $self->_write_conf;
    $self->{setup}->($self) if $self->{setup};
    return $self;
}

sub dir        { $_[0]{dir} }
sub port       { $_[0]{port} }
sub error_log  { $_[0]{error_log} }
sub access_log { $_[0]{access_log} }
sub url        { "http://127.0.0.1:$_[0]{port}$_[1]" }
sub table_path { "$_[0]{dir}/table.json" }

sub _write_site {
    my $self = shift;
    my $docs = "$self->{dir}/htdocs";
    mkdir $docs;
    my %files = (
        'index.html' => "hotlimit test instance\n",
        %{ $self->{files} || {} },
    );
    if (HotLimitTable::hl_have_php()) {
        my $php = <<'PHP';
<?php
header('Content-Type: text/plain');
echo "php ok\n";
echo "route=", $_SERVER['HOTLIMIT_ROUTE'] ?? '-', "\n";
echo "remaining=", $_SERVER['HOTLIMIT_REMAINING'] ?? '-', "\n";
echo "r=", $_GET['r'] ?? '-', "\n";
echo "path_info=", $_SERVER['PATH_INFO'] ?? '-', "\n";
PHP
        $files{'index.php'} //= $php;
        $files{'front.php'} //= $php;
    }
    for my $rel (sort keys %files) {
        my $path = "$docs/$rel";
        (my $d = $path) =~ s{/[^/]+$}{};
        File::Path::mkpath($d) unless -d $d;
        open my $fh, '>', $path or die "cannot write $path: $!";
        print {$fh} $files{$rel};
        close $fh;
    }
}

sub _write_conf {
    my $self = shift;
    my $dir = $self->{dir};
    my $mpm = $self->{mpm} || HotLimitTable::hl_mpm();
    my $base = HotLimitTable::_base_conf($mpm);
    open my $bh, '<', $base or die "cannot read $base: $!";
    my @load = grep { /^\s*LoadModule\s/ } <$bh>;
    close $bh;
    my $mpm_conf = $mpm eq 'prefork' ? <<'PREFORK' : <<'EVENT';
StartServers 3
MinSpareServers 2
MaxSpareServers 4
MaxRequestWorkers 10
PREFORK
StartServers 2
ServerLimit 4
ThreadLimit 16
ThreadsPerChild 8
MinSpareThreads 8
MaxSpareThreads 32
MaxRequestWorkers 32
EVENT
    mkdir "$dir/run";
    # Servers that share a Redis store share the secret their keyed hashes
    # of client values are made with (HotLimitSecretFile), as README says:
    # every test server on Redis gets the same one unless its test names
    # its own (or says shared_secret => 0).
    my $secret = '';
    if (($self->{shared_secret} // 1) && $self->{conf} =~ /^\s*HotLimitStore\s+redis/m
        && $self->{conf} !~ /^\s*HotLimitSecretFile\s/m) {
        my $file = "$dir/../hl-redis-shared.secret";
        unless (-s $file) {
            open my $sf, '>', $file or die "cannot write $file: $!";
            print {$sf} 'hotlimit-test-secret-shared-by-servers-on-one-redis';
            close $sf;
        }
        $secret = "HotLimitSecretFile \"$file\"\n";
    }
    my $conf = join('', @load) . <<"CONF";
ServerRoot "$dir"
ServerName 127.0.0.1
Listen 127.0.0.1:$self->{port}
PidFile "$self->{pid_file}"
DefaultRuntimeDir "$dir/run"
ErrorLog "$self->{error_log}"
LogLevel info
TypesConfig /etc/mime.types
Timeout 30
KeepAlive On
MaxConnectionsPerChild 0
$mpm_conf
DocumentRoot "$dir/htdocs"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "$dir/htdocs">
    AllowOverride None
    Require all granted
    FallbackResource /index.html
</Directory>
DirectoryIndex index.html
<IfModule php_module>
    <FilesMatch "\\.php\$">
        SetHandler application/x-httpd-php
    </FilesMatch>
</IfModule>
<Location /hotlimit-status>
    SetHandler hotlimit-status
    HotLimitStatus On
    HotLimitEngine Off
</Location>
Header always set X-HL-Route "%{HOTLIMIT_ROUTE}e" env=HOTLIMIT_ROUTE
Header always set X-HL-Remaining "%{HOTLIMIT_REMAINING}e" env=HOTLIMIT_ROUTE
LogFormat "%r\\t%>s\\t%P\\troute=%{HOTLIMIT_ROUTE}e\\trem=%{HOTLIMIT_REMAINING}e\\tus=%D" hltable
CustomLog "$self->{access_log}" hltable
HotLimitSlots 4096
HotLimitPersist Off
$secret
# --- from the test
$self->{conf}
CONF
    open my $fh, '>', $self->{conf_file} or die "cannot write $self->{conf_file}: $!";
    print {$fh} $conf;
    close $fh;
}

# Returns the last lines of the error log, for a failure message.
# The test clock (clock => 1). pass_time($s): $s seconds pass for httpd
# at once (its wall and monotonic clocks both move forward), so a test
# steps over a window instead of waiting it out. set_wall_offset($s): the
# wall clock alone is set $s seconds off the truth (a step of the system
# clock, as NTP or a VM resume makes; the monotonic clock stays).
sub pass_time {
    my ($self, $s) = @_;
    die "no test clock (start_httpd clock => 1)\n" unless $self->{clock_file};
    $self->{clock_wall} += $s;
    $self->{clock_mono} += $s;
    $self->_write_clock;
}
sub set_wall_offset {
    my ($self, $s) = @_;
    die "no test clock (start_httpd clock => 1)\n" unless $self->{clock_file};
    $self->{clock_wall} = $self->{clock_mono} + $s;
    $self->_write_clock;
}
# Return the time on httpd's wall and monotonic clocks, as epoch seconds:
# the test's own time, shifted as above (not shifted without a test clock).
sub wall_now { time + ($_[0]{clock_wall} // 0) }
sub mono_now { time + ($_[0]{clock_mono} // 0) }
sub _write_clock {
    my $self = shift;
    HotLimitTable::_spew($self->{clock_file}, "$self->{clock_wall} $self->{clock_mono}\n");
}

sub _tail {
    my ($self, $n) = @_;
    my @l = split /\n/, HotLimitTable::_slurp($self->{error_log}) // '';
    splice @l, 0, @l - $n if @l > $n;
    return join("\n", map { "#   $_" } @l);
}

sub start {
    my $self = shift;
    my $httpd = Apache::Test::vars('httpd') or die "no httpd in Apache::Test's config";
    # Extra environment for httpd and its children (env => { NAME => value }).
    my %env = %{ $self->{env} || {} };
    local @ENV{keys %env} = values %env;
    unlink $self->{pid_file};
    for my $try (1 .. 3) {
        my $off = -s $self->{error_log} || 0;
        my $out = `$httpd -f '$self->{conf_file}' -k start 2>&1`;
        last unless $?;
        # The free port was taken meanwhile: another port, another try.
        if ($try < 3 && grep { /Address already in use/ } ($out, $self->log_lines($off))) {
            $self->{port} = HotLimitTable::free_port();
            $self->_write_conf;
            next;
        }
        die "httpd -k start failed ($?): $out\n" . $self->_tail(20) . "\n";
    }
    return $self->wait_up;
}

# Waits until the parent has written its pid file and the instance answers
# (dies after the start's timeout). start calls it; call it again after a
# start that died, to take over an instance that came up late.
sub wait_up {
    my $self = shift;
    my $pid = HotLimitTable::wait_until(sub {
        my $p = HotLimitTable::_slurp($self->{pid_file});
        return $p && $p =~ /^(\d+)/ ? $1 : 0;
    }, $self->{timeout} || 20);
    die "httpd wrote no pid file\n" . $self->_tail(20) . "\n" unless $pid;
    $self->{pid} = $pid;
    my $up = HotLimitTable::wait_until(sub {
        my $res = $self->{ua}->get($self->url('/hotlimit-status?json'));
        return $res->code == 200;
    }, $self->{timeout} || 20);
    die "httpd on port $self->{port} does not answer\n" . $self->_tail(20) . "\n"
        unless $up;
    return $self;
}

# Stops the instance (SIGTERM to the parent, then SIGKILL after 10 s).
# keep => 1 leaves the saved counters for the next start.
sub stop {
    my ($self, %o) = @_;
    my $pid = delete $self->{pid} or return;
    kill 'TERM', $pid;
    my $gone = HotLimitTable::wait_until(sub { !kill(0, $pid) }, 10);
    unless ($gone) {
        my @kids = $self->children($pid);
        kill 'KILL', $pid, @kids;
    }
    # The slotmem persistence files (~10 MB for the table) are of no use
    # once the instance is gone; the logs stay.
    unlink glob "$self->{dir}/run/*.persist" unless $o{keep};
    # A child that died on a signal is said on the test's output (not a
    # failure of this test: t/99-error-log.t judges the suite's own server).
    print STDERR "# WARNING: $self->{name}: $_\n"
        for grep { /exit signal (?!Killed)|Segmentation fault|double free|stack smashing/ }
            $self->log_lines(0);
}

# Returns the pids of the processes whose parent is $ppid (default: this
# instance's parent).
sub children {
    my ($self, $ppid) = @_;
    $ppid //= $self->{pid};
    my @kids;
    opendir my $dh, '/proc' or return ();
    for my $p (grep { /^\d+$/ } readdir $dh) {
        my $stat = HotLimitTable::_slurp("/proc/$p/stat") // next;
        push @kids, $p if $stat =~ /\)\s+\S\s+(\d+)/ && $1 == $ppid;
    }
    closedir $dh;
    return @kids;
}

sub pid { $_[0]{pid} }

# GET $path with optional header pairs; returns the HTTP::Response.
sub get {
    my ($self, $path, @headers) = @_;
    return $self->{ua}->get($self->url($path), @headers);
}

# GETs $path $n times; returns the status codes as one string "200 200 429".
sub codes {
    my ($self, $path, $n, @headers) = @_;
    return join ' ', map { $self->get($path, @headers)->code } 1 .. $n;
}

# Returns the decoded /hotlimit-status?json, or undef.
sub status {
    my $self = shift;
    my $res = $self->get('/hotlimit-status?json');
    return undef unless $res->code == 200;
    return eval { JSON::PP->new->utf8->decode($res->content) };
}

sub generation {
    my $st = $_[0]->status;
    return $st ? $st->{table}{generation} : -1;
}

# Returns the body of /hotlimit-status?metrics.
sub metrics { $_[0]->get('/hotlimit-status?metrics')->content }

# Waits until the table generation exceeds $gen; returns the new generation
# (or 0 on timeout).
sub wait_generation {
    my ($self, $gen, $timeout) = @_;
    my $g = HotLimitTable::wait_until(sub {
        my $now = $self->generation;
        return $now > $gen ? $now : 0;
    }, $timeout // 5);
    return $g || 0;
}

# Runs $change (a sub that changes the table), waits for the next
# generation and checks, as two tests, that one was published and that it
# came within one reload interval plus one second. Returns the generation.
sub change_applies {
    my ($self, $change, $what) = @_;
    my $mpm = HotLimitTable::hl_mpm();
    my $gen = $self->generation;
    my $t0 = time;
    $change->();
    my $g = $self->wait_generation($gen, 5);
    my $took = time - $t0;
    Apache::Test::ok(Apache::TestUtil::t_cmp($g > $gen ? 1 : 0, 1,
                                             "[$mpm] $what (generation $gen -> $g)"));
    Apache::Test::ok(Apache::TestUtil::t_cmp($took <= $APPLY_WITHIN ? 1 : 0, 1,
        "[$mpm] ... within interval + 1 s (took " . sprintf('%.2f', $took) . " s)"));
    return $g;
}

# Byte offset of the end of the access log now (for took_since).
sub access_offset { -s $_[0]{access_log} || 0 }

# Returns the times in seconds httpd itself took (%D, from reading the
# request to the end of the response) for the requests whose request line
# matches $re, logged after byte $offset of the access log, once $count of
# them are there (waits up to 5 s: a line is written just after its
# response). A bound on a request's duration measured here holds however
# long a busy machine keeps the test's own client from running.
sub took_since {
    my ($self, $offset, $re, $count) = @_;
    my @took;
    HotLimitTable::wait_until(sub {
        @took = map { /\tus=(\d+)$/ ? $1 / 1e6 : () }
                grep { (split /\t/)[0] =~ $re }
                HLTest::hl_lines_since($self->{access_log}, $offset);
        return @took >= $count;
    }, 5);
    return @took;
}

# Byte offset of the end of the error log now: pass it to wait_log to see
# only later lines.
sub log_offset { -s $_[0]{error_log} || 0 }

# Returns the error-log lines after byte $offset.
sub log_lines {
    my ($self, $offset) = @_;
    return HLTest::hl_lines_since($self->{error_log}, $offset || 0);
}

# Waits up to $timeout s for an error-log line after $offset matching $re;
# returns it, or undef.
sub wait_log {
    my ($self, $re, $offset, $timeout) = @_;
    my $line = HotLimitTable::wait_until(sub {
        my ($l) = grep { $_ =~ $re } $self->log_lines($offset);
        return $l;
    }, $timeout // 5);
    return $line || undef;
}

# ============================================================================
package HotLimitTable::Server;
# A one-process HTTP/1.1 server for the JSON table, forked from the test.
# It is steered through files in its directory, re-read on every request:
#   body   the document served
#   mode   ok   - 200 with Date, ETag (MD5 of the body) and Last-Modified
#                 (the body file's mtime); 304 when If-None-Match matches.
#                 The module sends the validators back only once they are
#                 strong: Last-Modified at least 1 s before Date
#          500  - 500 Internal Server Error
#          hang - accepts, reads the request, never answers (held until
#                 the mode changes)
#          down - closes its listening socket: connection refused
#          redirect - GET /table.json is answered 302 with the Location in
#                 the file "location" (set_redirect); other paths as ok
# and logs every request to requests.log, one line each:
#   TIME <TAB> STATUS <TAB> REQUEST-LINE <TAB> inm=If-None-Match <TAB> ims=If-Modified-Since
# (STATUS is "hang" for a request that gets no answer).
use strict;
use warnings FATAL => 'all';
use Time::HiRes qw(time sleep);
use IO::Select ();
use IO::Socket::INET ();
use POSIX ();
use Digest::MD5 ();

sub _new {
    my ($class, %o) = @_;
    my $self = bless {}, $class;
    $self->{dir} = HotLimitTable::_fresh_dir($o{name} || 'tablesrv');
    $self->{port} = $o{port} || HotLimitTable::free_port();
    $self->set_body(defined $o{body} ? $o{body} : '{"routes": {}}');
    $self->set_mode($o{mode} || 'ok');
    return $self;
}

sub port { $_[0]{port} }
sub dir  { $_[0]{dir} }
sub url  { "http://127.0.0.1:$_[0]{port}" . ($_[1] // '/table.json') }

sub set_body {
    my ($self, $body) = @_;
    $body = HotLimitTable::hl_json_encode($body) if ref $body;
    HotLimitTable::_spew("$self->{dir}/body", $body);
}

sub set_mode {
    my ($self, $mode) = @_;
    die "unknown table server mode '$mode'" unless $mode =~ /^(ok|500|hang|down|redirect)$/;
    HotLimitTable::_spew("$self->{dir}/mode", "$mode\n");
    # Wait until the server has seen it (it re-reads the mode every 50 ms).
    if ($self->{pid}) {
        HotLimitTable::wait_until(sub {
            (HotLimitTable::_slurp("$self->{dir}/mode-seen") // '') eq "$mode\n"
        }, 3);
    }
}

# Answers GET /table.json with a 302 to $location (absolute or relative);
# every other path is served as in mode ok.
sub set_redirect {
    my ($self, $location) = @_;
    HotLimitTable::_spew("$self->{dir}/location", $location);
    $self->set_mode('redirect');
}

# Returns the requests logged so far (from line $from, default 0) as
# hashes: time status line inm ims.
sub requests {
    my ($self, $from) = @_;
    open my $fh, '<', "$self->{dir}/requests.log" or return ();
    my @r;
    while (my $l = <$fh>) {
        chomp $l;
        my ($t, $status, $line, $inm, $ims) = split /\t/, $l;
        $inm =~ s/^inm=//;
        $ims =~ s/^ims=//;
        push @r, { time => $t, status => $status, line => $line,
                   inm => $inm, ims => $ims };
    }
    close $fh;
    splice @r, 0, $from if $from;
    return @r;
}

# Starts serving (forks); the port is bound before this returns.
sub start {
    my $self = shift;
    return if $self->{pid};
    my $listen = $self->_listen
        or die "table server: cannot listen on 127.0.0.1:$self->{port}: $!";
    my $parent = $$;
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        $SIG{INT} = $SIG{TERM} = sub { POSIX::_exit(0) };
        eval { $self->_serve($listen, $parent) };
        POSIX::_exit(0);
    }
    close $listen;
    $self->{pid} = $pid;
    HotLimitTable::wait_until(sub { -e "$self->{dir}/mode-seen" }, 3);
}

# Kills the server (connection refused afterwards).
sub stop {
    my $self = shift;
    my $pid = delete $self->{pid} or return;
    kill 'TERM', $pid;
    waitpid $pid, 0;
    unlink "$self->{dir}/mode-seen";
}

sub _listen {
    my $self = shift;
    return IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                 LocalPort => $self->{port}, Listen => 16,
                                 ReuseAddr => 1, Proto => 'tcp');
}

sub _log {
    my ($self, $status, $line, $inm, $ims) = @_;
    open my $fh, '>>', "$self->{dir}/requests.log" or return;
    printf {$fh} "%.3f\t%s\t%s\tinm=%s\tims=%s\n", time, $status, $line,
        $inm // '', $ims // '';
    close $fh;
}

# Reads a request head (up to a blank line) within 3 s; returns
# (request line, { lower-case header => value }) or ().
sub _read_head {
    my ($c) = @_;
    my $buf = '';
    my $sel = IO::Select->new($c);
    my $deadline = time + 3;
    while ($buf !~ /\r?\n\r?\n/ && time < $deadline) {
        last unless $sel->can_read($deadline - time);
        my $n = sysread $c, $buf, 8192, length $buf;
        last unless $n;
    }
    my ($head) = split /\r?\n\r?\n/, $buf, 2;
    return () unless defined $head && length $head;
    my ($line, @lines) = split /\r?\n/, $head;
    my %h;
    for (@lines) {
        my ($k, $v) = /^([^:]+):\s*(.*?)\s*$/ or next;
        $h{lc $k} = $v;
    }
    return ($line, \%h);
}

sub _http_date { POSIX::strftime('%a, %d %b %Y %H:%M:%S GMT', gmtime($_[0])) }

sub _respond {
    my ($c, $status, $reason, $headers, $body) = @_;
    $body //= '';
    my $out = "HTTP/1.1 $status $reason\r\n";
    $out .= "$_->[0]: $_->[1]\r\n" for @$headers;
    $out .= "Content-Length: " . length($body) . "\r\nConnection: close\r\n\r\n";
    $out .= $body unless $status == 304;
    syswrite $c, $out;
}

sub _serve {
    my ($self, $listen, $parent) = @_;
    my $dir = $self->{dir};
    my @held;                       # connections left hanging
    my $seen = '';
    while (1) {
        POSIX::_exit(0) if getppid() != $parent;   # the test is gone
        my $mode = HotLimitTable::_slurp("$dir/mode") // "ok\n";
        if ($mode ne $seen) {
            if ($mode eq "down\n") {
                close $listen if $listen;
                undef $listen;
            }
            elsif (!$listen) {
                $listen = $self->_listen;
                unless ($listen) { sleep 0.05; next }
            }
            if ($mode ne "hang\n") {
                close $_ for @held;
                @held = ();
            }
            $seen = $mode;
            HotLimitTable::_spew("$dir/mode-seen", $mode);
        }
        unless ($listen) { sleep 0.05; next }
        next unless IO::Select->new($listen)->can_read(0.05);
        my $c = $listen->accept or next;
        my ($line, $h) = _read_head($c);
        unless (defined $line) { close $c; next }
        my ($inm, $ims) = @{$h}{qw(if-none-match if-modified-since)};
        $mode = HotLimitTable::_slurp("$dir/mode") // "ok\n";
        if ($mode eq "hang\n") {
            $self->_log('hang', $line, $inm, $ims);
            push @held, $c;
            next;
        }
        if ($mode eq "500\n") {
            $self->_log(500, $line, $inm, $ims);
            _respond($c, 500, 'Internal Server Error',
                     [['Content-Type', 'text/plain']], "table server: 500 on purpose\n");
            close $c;
            next;
        }
        my ($path) = $line =~ m{^\S+\s+(\S+)};
        if ($mode eq "redirect\n" && ($path // '') eq '/table.json') {
            my $location = HotLimitTable::_slurp("$dir/location") // '/';
            $self->_log(302, $line, $inm, $ims);
            _respond($c, 302, 'Found', [['Location', $location],
                                        ['Content-Type', 'text/plain']],
                     "moved to $location\n");
            close $c;
            next;
        }
        my $body = HotLimitTable::_slurp("$dir/body") // '';
        my $etag = '"' . Digest::MD5::md5_hex($body) . '"';
        my @hdrs = (['Date', _http_date(time)],
                    ['ETag', $etag],
                    ['Last-Modified', _http_date((stat "$dir/body")[9])],
                    ['Content-Type', 'application/json']);
        if (defined $inm && grep { $_ eq $etag || $_ eq '*' } split /\s*,\s*/, $inm) {
            $self->_log(304, $line, $inm, $ims);
            _respond($c, 304, 'Not Modified', \@hdrs);
        }
        else {
            $self->_log(200, $line, $inm, $ims);
            _respond($c, 200, 'OK', \@hdrs, $body);
        }
        close $c;
    }
}

1;
