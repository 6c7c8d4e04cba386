# Counters survive a graceful restart: spend 2 of 3, SIGUSR1 the parent,
# wait for the new generation, then only 1 more is admitted.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 9;

my $port = hl_port();
ok t_cmp(GET('/graceful/')->code, 200, 'first of 3 admitted');
ok t_cmp(GET('/graceful/')->code, 200, 'second of 3 admitted');

my $ppid = hl_httpd_pid();
my @old = hl_children($ppid);
t_debug("parent $ppid, children before the restart: @old");
my $off = hl_offset(hl_error_log());
ok t_cmp(kill('USR1', $ppid), 1, "SIGUSR1 sent to the httpd parent $ppid");

# The restart is complete when the parent logged it, the module kept its
# segment, and every child of the old generation is gone (an old child
# would still count in the old segment).
# event and worker log "AH00493: SIGUSR1 received.  Doing graceful restart",
# prefork "AH00171: Graceful restart requested, doing restart".
my $RESTART = qr/AH00493: SIGUSR1 received|AH00171: Graceful restart requested/;
my $deadline = time + 20;
my (@lines, @alive);
while (time < $deadline) {
    @lines = hl_lines_since(hl_error_log(), $off);
    my %now = map { ($_ => 1) } hl_children($ppid);
    @alive = grep { $now{$_} } @old;
    last if (grep { /$RESTART/ } @lines) && (grep { /HL00209: kept/ } @lines) && !@alive;
    sleep 0.1;
}
ok t_cmp(scalar(grep { /$RESTART/ } @lines) ? 1 : 0, 1,
         'error log: the parent began a graceful restart (AH00493 or AH00171)');
my ($restored) = grep { /HL00209: kept/ } @lines;
ok t_cmp($restored // '', qr/HL00209: kept \d+ counter slots across the restart \([1-9]\d* in use\)/,
         'error log: HL00209 kept the counters');
ok t_cmp("@alive", '', 'the old generation of children is gone');

my $up = 0;
for (1 .. 100) { last if ($up = hl_server_up($port)); sleep 0.1 }
ok t_cmp($up, 1, 'the server answers again');

ok t_cmp(GET('/graceful/')->code, 200, 'after the restart: the third of 3 admitted');
ok t_cmp(GET('/graceful/')->code, 429, 'after the restart: the fourth rejected');
