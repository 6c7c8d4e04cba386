# A table path that is not a regular file (issue 6, defect 7): a FIFO is
# refused with a logged reason instead of being opened, so it blocks
# neither the start (post_config), nor the reloads in the watchdog, nor a
# graceful restart; once a regular file replaces it, the table applies
# within HotLimitReloadInterval + 1 s.
#
# On a module that does block, the test releases the blocked open itself
# (it opens the FIFO for writing) so that it fails instead of hanging.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Fcntl qw(O_WRONLY O_NONBLOCK);
use POSIX ();
use Time::HiRes qw(time sleep);
use HotLimitTable;

plan tests => 14, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
sub rule { return { max => $_[0], window => $_[1] // 60 } }

# Puts a FIFO at $path in one step (mkfifo + rename over what is there).
sub put_fifo {
    my $path = shift;
    my $tmp = "$path.fifo$$";
    unlink $tmp;
    POSIX::mkfifo($tmp, 0644) or die "mkfifo $tmp: $!";
    rename $tmp, $path or die "rename $tmp: $!";
}

# For $secs seconds, opens the FIFO at $path for writing whenever someone
# is blocked opening it for reading (a non-blocking open fails with ENXIO
# otherwise), which releases them. Returns how many were released.
sub release_fifo {
    my ($path, $secs) = @_;
    my ($n, $end) = (0, time + $secs);
    while (time < $end) {
        if (sysopen my $w, $path, O_WRONLY | O_NONBLOCK) {
            close $w;
            $n++;
        }
        sleep 0.05;
    }
    return $n;
}

my $fifo_failure = qr/HL00404: quota table \S+table\.json failed: not a regular file but a FIFO/;

# 1. A FIFO at the table path when httpd starts.
my $h = start_httpd(name => 'fifo', start => 0, timeout => 8,
                    setup => sub { put_fifo($_[0]->table_path) },
                    conf => <<'CONF');
HotLimitQuotaTable @DIR@/table.json
HotLimitReloadInterval 1
CONF
my $t0 = time;
my $up = eval { $h->start; 1 };
ok t_cmp($up ? 1 : 0, 1, "[$mpm] httpd starts with a FIFO as table path (" . elapsed_since($t0) . " s)");
unless ($up) {
    my $n = release_fifo($h->table_path, 2);
    print "# released $n blocked opens of the FIFO\n";
    $h->wait_up;
}
ok t_cmp($h->wait_log($fifo_failure, 0, 1),
         qr/; no valid table was loaded yet, so no table rules apply \(HotLimitTableFailure last-good\)/,
         "[$mpm] the FIFO is refused at startup with its reason (HL00404)");
ok t_cmp($h->codes('/f', 2), '200 200', "[$mpm] httpd serves, nothing limited");

# 2. The watchdog is not stuck on it: every reload logs the refusal again.
my $off = $h->log_offset;
ok t_cmp($h->wait_log($fifo_failure, $off, 3) ? 1 : 0, 1,
         "[$mpm] reloads go on while the path is a FIFO");

# 3. A regular file replaces the FIFO: in force within interval + 1 s.
$h->change_applies(sub { write_table($h->table_path, { routes => { '/f' => rule(1) } }) },
                   'regular file replacing the FIFO loaded');
ok t_cmp($h->codes('/f', 2), '200 429', "[$mpm] /f limited by the file (1/60s)");

# 4. A graceful restart while the path is a FIFO completes promptly.
$off = $h->log_offset;
put_fifo($h->table_path);
ok t_cmp($h->wait_log($fifo_failure, $off, 3) ? 1 : 0, 1,
         "[$mpm] a FIFO put in place of the file is refused by the reloader");
$off = $h->log_offset;
$t0 = time;
kill 'USR1', $h->pid;
# prefork says AH00163, event AH00489.
my $resumed = $h->wait_log(qr/configured -- resuming normal operations/, $off, 5);
ok t_cmp($resumed ? 1 : 0, 1, "[$mpm] graceful restart with a FIFO as table path completes ("
         . elapsed_since($t0) . " s)");
unless ($resumed) {
    my $n = release_fifo($h->table_path, 3);
    print "# released $n blocked opens of the FIFO\n";
}
ok t_cmp($h->wait_log($fifo_failure, $off, 1) ? 1 : 0, 1,
         "[$mpm] ... and its post_config refused the FIFO (HL00404)");
my $code = wait_until(sub { $h->get('/index.html')->code == 200 }, 3);
ok t_cmp($code ? 1 : 0, 1, "[$mpm] httpd serves after the graceful restart");

# 5. The new generation's reloader picks up a regular file again.
$h->change_applies(sub { write_table($h->table_path, { routes => { '/f' => rule(1), '/g' => rule(1) } }) },
                   'regular file after the graceful restart loaded');
ok t_cmp($h->codes('/g', 2), '200 429', "[$mpm] /g limited (1/60s)");
$h->stop;
