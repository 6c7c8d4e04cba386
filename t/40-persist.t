# Counters across a full stop and start (spec section 8): with
# HotLimitPersist On they are saved when httpd stops (HL00214) and restored
# at the next start (HL00203 restored), for fixed, sliding and GCRA windows;
# with HotLimitPersist Off the next start begins empty. A graceful restart
# that changes HotLimitSlots keeps the running table (HL00208).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;

plan tests => 15 + 2;

my $quotas = <<'CONF';
<Location /pf>
    HotLimitQuota 3/1h
</Location>
<Location /ps>
    HotLimitQuota 3/1h algo=sliding
</Location>
<Location /pg>
    HotLimitQuota 3/1h algo=gcra
</Location>
CONF

my $h = start_httpd(name => 'persist', conf => "HotLimitPersist On\n$quotas");
ok t_cmp($h->codes('/pf', 2) . ' ' . $h->codes('/ps', 2) . ' ' . $h->codes('/pg', 2),
         '200 200 200 200 200 200', 'two of 3/1h spent on each quota');
my $before = $h->status;
$h->stop(keep => 1);
ok t_cmp(scalar(grep { /HL00214: saved \d+ counters/ } $h->log_lines(0)), 1,
         'the stop saved the counters (HL00214)');
ok t_cmp(-s $h->dir . '/run/hotlimit-counters.persist' ? 1 : 0, 1, 'the file is there');
# Sized to use: the header names the segment's size (bytes 24..31); the
# file holds only the pages of the counters in use.
{
    my $file = $h->dir . '/run/hotlimit-counters.persist';
    open my $fh, '<:raw', $file or die "$file: $!";
    read $fh, my $head, 32;
    my $segment = unpack 'Q<', substr $head, 24, 8;
    my $size = -s $file;
    ok t_cmp($size < $segment / 4 ? 1 : 0, 1,
             "the file is sized to use: $size bytes for a $segment-byte segment");
}
my $off = $h->log_offset;
$h->start;
ok t_cmp(scalar(grep { /HL00203: restored \d+ counter slots .*[1-9]\d* in use/ }
                $h->log_lines($off)), 1, 'the start restored them (HL00203)');
ok t_cmp(-e $h->dir . '/run/hotlimit-counters.persist' ? 1 : 0, 0,
         'the file is consumed at the start');
ok t_cmp($h->codes('/pf', 2), '200 429', 'fixed: one left after stop/start');
ok t_cmp($h->codes('/ps', 2), '200 429', 'sliding: one left after stop/start');
ok t_cmp($h->codes('/pg', 2), '200 429', 'gcra: one left after stop/start');
# The status page says since when the counters count (kept with them) and
# since when this httpd runs (a full restart: new).
my $after = $h->status;
ok t_cmp($after->{counters_started_ms} // 'none', $before->{counters_started_ms} // 'missing',
         '?json counters_started_ms: kept with the counters across stop/start');
ok t_cmp($after->{started_ms} > $before->{started_ms} ? 1 : 0, 1,
         '?json started_ms: this httpd started anew');

# A graceful restart asking for another HotLimitSlots keeps the table.
{
    my $conf = HotLimitTable::_slurp($h->{conf_file});
    $conf =~ s/HotLimitSlots 4096/HotLimitSlots 8192/ or die 'no HotLimitSlots line';
    open my $fh, '>', $h->{conf_file} or die $!;
    print {$fh} $conf;
    close $fh;
    my $o = $h->log_offset;
    kill 'USR1', $h->pid;
    my $line = $h->wait_log(qr/HL00208/, $o, 15);
    ok t_cmp($line // '', qr/HL00208: HotLimitSlots 8192 takes effect at the next full stop/,
             'a changed HotLimitSlots waits for a full restart (HL00208)');
    $h->wait_log(qr/HL00209/, $o, 15);
    sleep 1;
    ok t_cmp($h->codes('/pf', 1), '429', 'the counters are still in force after it');
}

# HotLimitPersist Off: a stop and start begins empty.
my $o = HotLimitTable::start_httpd(name => 'nopersist', conf => "HotLimitPersist Off\n$quotas");
ok t_cmp($o->codes('/pf', 3), '200 200 200', 'Off: three of 3/1h');
$o->stop(keep => 1);
ok t_cmp(-e $o->dir . '/run/hotlimit-counters.persist' ? 1 : 0, 0, 'Off: nothing saved');
$o->start;
ok t_cmp($o->codes('/pf', 1), '200', 'Off: the next start begins empty');
ok t_cmp(scalar(grep { /HL00203: created/ } $o->log_lines(0)), 2, 'Off: created twice');
