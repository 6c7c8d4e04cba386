# HotLimitStatusNames (issue 27 item 2, spec section 7): the status page,
# ?json and the account lookup name an account key by the value the client
# sent (HTML-escaped on the page), recorded only for keys that refused or
# reached their limit; never in the error log or ?metrics; Off: hashes only.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET POST);
use HLTest;

plan tests => 19;

# ok with a name (Apache::Test's ok(X, Y) compares X with Y).
sub check { my ($cond, $name) = @_; ok t_cmp($cond ? 1 : 0, 1, $name) }

my $name  = 'Zq7731<b>&"Victim"';       # markup and quotes in a user name
my $quiet = 'Quiet-Yx4402';             # counted, never at its limit
my $long  = 'Lg' . ('x' x 98);          # 100 bytes: the first 64 kept
my $elog  = hl_error_log();
my $from  = hl_offset($elog);

Apache::TestRequest::module('hl_names');
my @codes = map { POST('/nm/login', content => [ acct => $name ])->code } 1 .. 5;
ok t_cmp("@codes", '200 200 200 429 429', 'an account: 3 admitted, then refused');
POST('/nm/ok', content => [ acct => $quiet ]) for 1 .. 2;
POST('/nm/login', content => [ acct => $long ]) for 1 .. 4;

my $j = hl_json(GET '/hotlimit-status?json') || {};
my ($top) = grep { ($_->{name} // '') eq $name } @{ $j->{top_refused} || [] };
check $top, '?json top_refused names the account as the client sent it';
ok t_cmp($top ? $top->{client} : '', qr/^p:[0-9a-f]{16}$/, '... beside its hashed key');
my ($lim) = grep { ($_->{name} // '') eq $name } @{ $j->{limited_keys} || [] };
check $lim, '?json limited_keys names it too';
my ($cut) = grep { ($_->{name} // '') =~ /^Lgx/ } @{ $j->{top_refused} || [] };
ok t_cmp($cut ? $cut->{name} : '', 'Lg' . ('x' x 62) . '...',
         'a long value: its first 64 bytes, marked as cut');
my $json_text = GET('/hotlimit-status?json')->content;
check $json_text !~ /\Q$quiet\E/, 'an account never refused nor at its limit is not named';

my $html = GET('/hotlimit-status')->content;
ok t_cmp($html, qr{<span class="name"[^>]*>&ldquo;Zq7731&lt;b&gt;&amp;&quot;Victim&quot;&rdquo;</span>},
         'the page names it, HTML-escaped');
check $html !~ /Zq7731<b>/, 'never unescaped on the page';
check $html !~ /\Q$quiet\E/, 'the page does not name the quiet account';

# The lookup: asked in another spelling (norm=lower), it shows the name the
# book holds.
my $lk = hl_json(GET('/hotlimit-status?json&lookup=' . 'zq7731%3Cb%3E%26%22victim%22')) || {};
my ($row) = @{ ($lk->{lookup} || {})->{keys} || [] };
ok t_cmp($row ? $row->{name} : '', $name, '?json lookup: the key named as the client sent it');
my $lh = GET('/hotlimit-status?lookup=zq7731%3Cb%3E%26%22victim%22')->content;
ok t_cmp($lh, qr{<tr class="lookup">.*&ldquo;Zq7731&lt;b&gt;}s, 'the HTML lookup names it');

my $m = GET('/hotlimit-status?metrics')->content;
ok t_cmp($m, qr/hotlimit_key_refusals/, '?metrics lists the refused keys ...');
check $m !~ /Zq7731|Lgxxx|\Q$quiet\E/, '... by hash only, never by name';

# HotLimitStatusNames Off: hashes only.
Apache::TestRequest::module('hl_names_off');
my $off = 'Offname5521';
@codes = map { POST('/nm/login', content => [ acct => $off ])->code } 1 .. 5;
ok t_cmp("@codes", '200 200 200 429 429', 'Off: the account is limited the same');
my $jo = hl_json(GET '/hotlimit-status?json') || {};
my @rows = @{ $jo->{top_refused} || [] };
ok t_cmp(scalar(@rows), 1, 'Off: its key is listed ...');
ok t_cmp(defined $rows[0]{name} ? $rows[0]{name} : 'null', 'null', '... with no name (null)');
my $ho = GET('/hotlimit-status')->content . GET('/hotlimit-status?json')->content;
check $ho !~ /Offname5521|<span class="name"/, 'Off: neither the page nor ?json names it';

# Never in the error log (LogLevel trace8 here), however many lines.
my @log = hl_lines_since($elog, $from);
ok t_cmp(scalar(grep { /HL00100|HL01151|rejected/ } @log) > 0, 1, 'the refusals were logged ...');
check !grep({ /Zq7731|Lgxxxx|Offname5521|\Q$quiet\E/ } @log), '... and no name is in the error log';
