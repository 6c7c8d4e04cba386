# A new table is never missed (spec 8, issue 18 item 7): a validator from
# the same second as the read or fetch that saw it is weak (RFC 9110
# 8.8.2.2), so a same-size edit made within that second is loaded at the
# next reload.
#
# 1. A URL served by Python's own http.server: Last-Modified with 1-second
#    resolution, no ETag, If-Modified-Since answered 304 by the second. The
#    table is edited twice within one second ("5/1m" then "3/1m", same
#    size), the first edit fetched within that second: the second edit is in
#    force within one reload interval + 1 s, and once the validator is older
#    than a second the fetches are conditional again (304). Before the fix
#    the module sent the same-second Last-Modified back and got 304 forever.
# 2. A local file on a file system with 1-second timestamps (each write's
#    mtime set to its whole second, as ext3, FAT or `cp -p`/`rsync -t`
#    leave it): the same two edits. Before the fix mtime and size were equal,
#    so the second edit was never read.
# Both under the default HotLimitTableFailure.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use POSIX ();
use Time::HiRes qw(time sleep);
use HotLimitTable;

my ($python) = grep { -x } '/usr/bin/python3', '/usr/local/bin/python3';
plan tests => 11, need need_module('mod_hotlimit.c'),
    need { 'python3 (for http.server)' => defined $python };

my $mpm = hl_mpm();

# The table with route /a limited to $limit ("5/1m"); every limit of this
# test has one digit, so all versions have the same size.
sub table_with {
    my $limit = shift;
    return hl_json_encode({ routes => { '/a' => { limits => [$limit] },
                                        '/z' => { limits => ['9/1m'] } } });
}

# Edits the table twice within one wall-clock second: $write->($content,
# $second) first publishes a version of "N/1m" (N from 5 up, a new one per
# try), and as soon as the module has loaded it -- still in that second --
# publishes $last ("3/1m"), of the same size. A try whose load came too late
# is repeated from the next second. Returns the time the last edit was
# written and the generation the first one was published as, or () when no
# try managed.
sub same_second_edit {
    my ($h, $write, $last) = @_;
    for my $n (5 .. 9) {
        # The table is checked by a watchdog every second at a fixed phase
        # (status "checked_ms"): the first edit goes just before the next
        # check, early enough in its second for the second edit to follow
        # in it. (Just after a second started, a phase near .00 on a busy
        # machine missed all five tries.)
        my $st = $h->status;
        my $phase = (($st && $st->{table}{checked_ms}) // 0) % 1000 / 1000;
        my $aim = $phase > 0.7 ? 0.02 : $phase > 0.06 ? $phase - 0.05 : 0.002;
        my $t = time;
        my $wait = int($t) + 1 + $aim - $t;
        sleep($wait >= 1 ? $wait - 1 : $wait);
        my $second = int(time);
        my $gen = $h->generation;
        $write->(table_with("$n/1m"), $second);
        my $loaded = wait_until(sub { my $g = $h->generation; $g > $gen ? $g : 0 }, 3);
        next unless $loaded && int(time) == $second;
        $write->(table_with($last), $second);
        my $at = time;
        if (int($at) == $second) {
            print "# try $n: both edits within second $second\n";
            return ($at, $loaded);
        }
    }
    return ();
}

# Checks that the edit written at $at is published within interval + 1 s
# and that /a is then limited to 3/1m (3 admitted, the 4th refused).
sub last_edit_applies {
    my ($h, $at, $gen, $what) = @_;
    my $g = $h->wait_generation($gen, 5);
    my $took = time - $at;
    ok t_cmp($g > $gen && $took <= $HotLimitTable::APPLY_WITHIN ? 1 : 0, 1,
             "[$mpm] $what: the same-second edit is loaded within interval + 1 s"
             . sprintf(' (%s after it)', $g ? sprintf('%.2f s', $took) : 'never'));
    ok t_cmp($h->codes('/a', 4), '200 200 200 429',
             "[$mpm] $what: /a limited by the last edit (3/1m), not the first (5/1m or more)");
}

# ---- 1. a URL served by Python's http.server ------------------------------
my $srv_dir = HotLimitTable::_fresh_dir('pyhttp');
my $doc = "$srv_dir/table.json";
HotLimitTable::_spew($doc, table_with('4/1m'));
my $port = free_port();
my $py_log = "$srv_dir/requests.log";
my $py = fork // die "fork: $!";
if (!$py) {
    open STDERR, '>', $py_log or POSIX::_exit(1);
    open STDOUT, '>&', \*STDERR;
    exec($python, '-u', '-m', 'http.server', $port, '--bind', '127.0.0.1',
         '--directory', $srv_dir) or POSIX::_exit(1);
}
my $test_pid = $$;
END {
    if ($py && $$ == $test_pid) {
        local $?;               # the test's own exit status stays
        kill 'TERM', $py;
        waitpid $py, 0;
    }
}
my $ua = LWP::UserAgent->new(timeout => 2);
ok t_cmp(wait_until(sub { $ua->get("http://127.0.0.1:$port/table.json")->code == 200 }, 10)
         ? 1 : 0, 1, "[$mpm] Python's http.server serves the table");
my $head = $ua->get("http://127.0.0.1:$port/table.json");
ok t_cmp(join(' ', map { defined $head->header($_) ? 1 : 0 } qw(Last-Modified Date ETag)),
         '1 1 0', "[$mpm] ... with Last-Modified and Date, and no ETag");

my $h = start_httpd(name => 'url-same-second', conf => <<"CONF");
HotLimitQuotaTable http://127.0.0.1:$port/table.json
HotLimitReloadInterval 1
CONF
ok t_cmp($h->wait_generation(0, 5) > 0 ? 1 : 0, 1, "[$mpm] the first table is fetched");

my ($at, $gen) = same_second_edit($h, sub { HotLimitTable::_spew($doc, $_[0]) }, '3/1m');
ok t_cmp(defined $at ? 1 : 0, 1, "[$mpm] URL: two same-size edits within one second, the first loaded in it");
last_edit_applies($h, $at // time, $gen // $h->generation, 'URL');

# Once the document is older than a second, the fetches are conditional
# again: Python answers them 304.
my $lines = () = do { open my $fh, '<', $py_log; <$fh> };
my $c304 = wait_until(sub {
    open my $fh, '<', $py_log or return 0;
    my @l = <$fh>;
    return scalar grep { m{"GET /table\.json HTTP/1\.[01]" 304 } } @l[$lines .. $#l];
}, 4);
ok t_cmp($c304 ? 1 : 0, 1, "[$mpm] URL: later fetches are conditional again (304 from http.server)");
$h->stop;

# ---- 2. a local file with 1-second timestamps -----------------------------
my $h2 = start_httpd(name => 'file-same-second', table => table_with('4/1m'), conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
CONF
ok t_cmp($h2->codes('/z', 1), '200', "[$mpm] file: the table is in force");
my $path = $h2->table_path;
# Rewrites the file in place and gives it the whole second as its mtime.
my $write = sub {
    my ($content, $second) = @_;
    open my $fh, '>', $path or die "cannot write $path: $!";
    print {$fh} $content;
    close $fh or die "cannot write $path: $!";
    utime $second, $second, $path;
};
($at, $gen) = same_second_edit($h2, $write, '3/1m');
ok t_cmp(defined $at ? 1 : 0, 1, "[$mpm] file: two same-size edits with the same mtime, the first loaded in its second");
last_edit_applies($h2, $at // time, $gen // $h2->generation, 'file');
$h2->stop;
