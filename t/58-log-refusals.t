# HotLimitLogRefusals: a flood of refusals writes a bounded number of
# lines. Under `first` (the default) the first refusal of a key in each
# refusal spell is logged in full (HL00100) and the later ones are summed
# into at most one line per key per 10 s (HL01150 for a key that is the
# client address, naming it; HL01151 for a shared key); `all` logs each
# refusal, `off` none; the User-Agent is cut to 256 bytes. The fail2ban
# filter of conf-examples/ still matches the flooding address at least
# maxretry times within findtime on the real log of a flood under `first`.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use Time::HiRes qw(sleep time);
use HLTest;

plan tests => 19;

my $port = hl_port();
my $ua = 'A' x 3000;
my $hdr = "User-Agent: $ua\r\n";

# Lines of the error log since $off that carry $tag and " route=$route ".
sub lines_of {
    my ($off, $tag, $route) = @_;
    return grep { /\Q$tag\E: / && / route=\Q$route\E / } hl_lines_since(hl_error_log(), $off);
}

# Floods $path with 302 requests from 10 clients at once: 2 admitted, 300
# refused (every quota here admits 2 or 1 a minute).
sub flood {
    my ($path) = @_;
    return hl_hammer(port => $port, path => $path, total => 302, conc => 10,
                     headers => $hdr);
}

my $off = hl_offset(hl_error_log());

# --- first (default): 300 refusals, one line -----------------------------------
my $codes = flood('/lgfirst/');
my $t_flood = time;
ok t_cmp(($codes->{200} // 0) . ' ' . ($codes->{429} // 0), '2 300',
         'first: 302 requests, 2 admitted, 300 refused');
# All: 300 lines (the log is written before the response, so it is there).
$codes = flood('/lgall/');
ok t_cmp($codes->{429} // 0, 300, 'all: 300 refused');
$codes = flood('/lgoff/');
ok t_cmp($codes->{429} // 0, 300, 'off: 300 refused');
$codes = hl_hammer(port => $port, path => '/lgglob/', total => 301, conc => 10,
                   headers => $hdr);
ok t_cmp($codes->{429} // 0, 300, 'by=global: 300 refused');
my $t_last = time;    # every first refusal was before this

my @first = lines_of($off, 'HL00100', '/lgfirst');
ok t_cmp(scalar @first, 1, 'first: one HL00100 line for the 300 refusals');
ok t_cmp(scalar(lines_of($off, 'HL01150', '/lgfirst')), 0,
         'first: no summary within 10 s');
ok t_cmp($first[0] // '', qr/HL00100: rejected client=127\.0\.0\.1 route=\/lgfirst key=\/lgfirst\|127\.0\.0\.1 limit=2\/1m retry_after=\d+ user_agent="A{256}"$/,
         'the full line, with the User-Agent cut to 256 bytes');
my @all = lines_of($off, 'HL00100', '/lgall');
ok t_cmp(scalar @all, 300, 'all: 300 HL00100 lines');
ok t_cmp(scalar(grep { /user_agent="A{256}"$/ } @all), 300,
         'all: each with the User-Agent cut to 256 bytes');
ok t_cmp(scalar(grep { /route=\/lgoff / } hl_lines_since(hl_error_log(), $off)), 0,
         'off: no line at all');
ok t_cmp(scalar(lines_of($off, 'HL00100', '/lgglob')), 1,
         'by=global, first: one HL00100 line');

# --- 10 s after the first refusal: one summary per key -------------------------
sleep 0.1 while time - $t_last < 10.3;
my $off2 = hl_offset(hl_error_log());
ok t_cmp(GET('/lgfirst/')->code, 429, 'first: refused again 10 s later');
ok t_cmp(GET('/lgglob/')->code, 429, 'by=global: refused again 10 s later');
my @sum = lines_of($off2, 'HL01150', '/lgfirst');
ok t_cmp(scalar(@sum) . ' ' . ($sum[0] // ''),
         qr/^1 .*HL01150: 300 more refusals client=127\.0\.0\.1 route=\/lgfirst key=\/lgfirst\|127\.0\.0\.1 limit=2\/1m$/,
         'one HL01150 summary: 299 + this one, naming the client address');
my @gsum = lines_of($off2, 'HL01151', '/lgglob');
ok t_cmp(scalar(@gsum) . ' ' . ($gsum[0] // ''),
         qr/^1 .*HL01151: 300 more refusals of a shared key route=\/lgglob key=\/lgglob\|\* limit=1\/1m last_client=127\.0\.0\.1$/,
         'a shared key\'s summary (HL01151) names no client= to ban');

# --- a new spell (window) logs its first refusal in full again ---------------
# 1/1s: for 3.2 s, a refused request every 10 ms; every window admits one
# request, then its first refusal is logged.
my $off3 = hl_offset(hl_error_log());
my $t0 = time;
my %n;
while (time - $t0 < 3.2) {
    $n{ GET('/lgsec/')->code }++;
    sleep 0.01;
}
my $sec = () = lines_of($off3, 'HL00100', '/lgsec');
ok t_cmp("$sec refused-first-lines", ($n{200} // 0) . ' refused-first-lines',
         "1/1s for 3.2 s: one HL00100 per window (" . ($n{200} // 0)
         . " windows, " . ($n{429} // 0) . " refusals)");

# --- fail2ban on the real log of the floods under `first` ----------------------
my $examples = "$FindBin::Bin/../conf-examples/fail2ban";
my $fail2ban = -x '/usr/bin/fail2ban-regex' ? '/usr/bin/fail2ban-regex' : '';
if (!$fail2ban) {
    skip('fail2ban-regex is not installed (apt-get install fail2ban)', 0) for 1 .. 3;
}
else {
    my $jail = HLTestSlurp::slurp("$examples/jail.d/hotlimit.local");
    my ($maxretry) = $jail =~ /^maxretry\s*=\s*(\d+)/m;
    my ($findtime) = $jail =~ /^findtime\s*=\s*(\d+)m/m;
    # The floods under `first` of this client: /lgfirst, /lgsec, /lgglob.
    my @log = grep { /route=\/(?:lgfirst|lgsec|lgglob) / }
              hl_lines_since(hl_error_log(), $off);
    my $file = hl_logs() . '/hl-f2b-first.log';
    open my $fh, '>', $file or die "$file: $!";
    print {$fh} "$_\n" for @log;
    close $fh;
    my $out = `$fail2ban -v '$file' '$examples/filter.d/hotlimit.conf' 2>&1`;
    my ($matched) = $out =~ /Lines: \d+ lines, \d+ ignored, (\d+) matched/;
    my $want = grep { /HL00100: rejected client=127\.0\.0\.1 |HL01150: \d+ more refusals client=127\.0\.0\.1 / } @log;
    ok t_cmp($matched // -1, $want,
             "fail2ban: the filter matches the $want HL00100 and HL01150 lines (not HL01151)");
    ok t_cmp(($matched // 0) >= ($maxretry // 1e9) ? 1 : 0, 1,
             "fail2ban: the flooding address matched $matched times, at least maxretry=" . ($maxretry // '?'));
    ok t_cmp(time - $t_flood < ($findtime // 0) * 60 ? 1 : 0, 1,
             'all within findtime (' . ($findtime // '?') . ' min)');
}

package HLTestSlurp;
sub slurp { my $f = shift; open my $h, '<', $f or return ''; local $/; return <$h> }
