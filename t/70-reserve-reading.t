# reserve=max_tokens reads the body as the backend's JSON decoder does
# (spec 2.1 "reserve="; issue 25 item 1): keys unescaped, every duplicate
# seen, numbers in any JSON form, digit strings, every one of max_tokens,
# max_completion_tokens and max_output_tokens; the largest is reserved.
#
# The upstream is a CGI that takes 1 s (like an LLM) and answers with
# X-Tokens: 1000 (two settled answers free nothing). On `HotLimitQuota 2000/1m cost=header:X-Tokens
# reserve=max_tokens:16`, 20 requests at once, each asking for 900 tokens
# in one spelling, each spelling under its own key: 900 + the prompt
# (body / 4) fits twice in 2,000, so 2 are admitted and 18 refused. Before
# this change (main 0f9f2b3) the first duplicate (1), or DEFAULT (16) for
# a spelling it could not read, was reserved: all 20 were admitted.
# HotLimitPromptEstimate 1 counts a token per body byte. The differential
# harness t/support/php_reserve_diff.py (the module's reader against
# php-cli's json_decode on random and adversarial bodies) runs last.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(sleep);
use Apache::Test;
use Apache::TestUtil;
use HotLimitTable;
use HLTest ();

my @spellings = (
    [ 'duplicate keys (the last wins in PHP)', '{"max_tokens":1,"max_tokens":900}' ],
    [ 'duplicate keys (the first is larger)',  '{"max_tokens":900,"max_tokens":1}' ],
    [ 'an escaped key',                        '{"max\u005ftokens":900}' ],
    [ 'an exponent',                           '{"max_tokens":9e2}' ],
    [ 'a float with an exponent',              '{"max_tokens":9.0E+2}' ],
    [ 'a string of digits',                    '{"max_tokens":"900"}' ],
    [ 'max_completion_tokens after max_tokens', '{"max_tokens":1,"max_completion_tokens":900}' ],
    [ 'max_output_tokens before max_tokens',   '{"max_output_tokens":900,"max_tokens":1}' ],
);

plan tests => 2 * @spellings + 3 + 1 + 1,
    need { 'php-cli for the differential harness'
           => scalar(`php -r 'echo 1;' 2>/dev/null`) eq '1' };

my $mpm = HotLimitTable::hl_mpm();

my $llm_cgi = <<'CGI';
#!/usr/bin/perl
# An LLM stand-in: 1 s per answer, X-Tokens: 1000; one byte to runs.log.
use strict;
use Fcntl qw(:flock);
my $body = '';
{ local $/; $body = <STDIN> // q(); }   # all of it: a CGI under mod_cgid that leaves a chunked body unread gets its answer reset
(my $dir = $ENV{SCRIPT_FILENAME}) =~ s{/[^/]+$}{};
open my $f, '>>', "$dir/runs.log" or die "runs.log: $!";
flock $f, LOCK_EX;
print {$f} 'x';
close $f;
select undef, undef, undef, 1;
print "X-Tokens: 1000\r\nContent-Type: text/plain\r\n\r\nok\n";
CGI

my $conf = HotLimitTable::hl_cgi_conf() . <<'CONF';
<Directory "@DIR@/htdocs">
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
HotLimitHeaders On
<Location /m/>
    HotLimitQuota 2000/1m by=header:Authorization cost=header:X-Tokens reserve=max_tokens:16
</Location>
<Location /p/>
    HotLimitPromptEstimate 1
    HotLimitQuota 2000/1m by=header:Authorization cost=header:X-Tokens reserve=max_tokens:16
</Location>
CONF

my $h = HotLimitTable::start_httpd(
    name => 'reserve-reading', conf => $conf,
    files => { 'm/llm.cgi' => $llm_cgi, 'p/llm.cgi' => $llm_cgi },
    setup => sub { chmod 0755, map { $_[0]->dir . "/htdocs/$_/llm.cgi" } qw(m p) });
my $p = $h->port;

# Returns the text of a POST of JSON $json to $path with API key $key.
sub post_req {
    my ($path, $key, $json) = @_;
    return "POST $path HTTP/1.0\r\nHost: localhost\r\nAuthorization: $key\r\n"
           . "Content-Type: application/json\r\nContent-Length: " . length($json)
           . "\r\n\r\n$json";
}

# Sends $n copies of $req at once; returns "ADMITTED REFUSED".
sub burst {
    my ($req, $n) = @_;
    my $count = HLTest::hl_at_once($p, $req, $n);
    sleep 0.3;
    return ($count->{200} // 0) . ' ' . ($count->{429} // 0);
}

sub runs {
    my $log = HotLimitTable::_slurp($h->dir . "/htdocs/$_[0]/runs.log") // '';
    unlink $h->dir . "/htdocs/$_[0]/runs.log";
    return length $log;
}

my $k = 0;
for my $s (@spellings) {
    my ($what, $json) = @$s;
    ++$k;
    ok t_cmp(burst(post_req('/m/llm.cgi', "sk-$k", $json), 20), '2 18',
             "[$mpm] $what ($json): 20 at once on 2,000: 2 admitted, 18 refused");
    ok t_cmp(runs('m'), 2, "[$mpm] $what: ... the upstream ran twice");
}

# HotLimitPromptEstimate 1: a 1,200-byte body with max_tokens 1 reserves
# 1 + 1,200; under the default 4, 1 + 300 (RateLimit's r= at admission).
sub remaining {
    my ($req) = @_;
    my $res = HLTest::hl_raw($p, $req, 20) // '';
    my ($code) = $res =~ m{^HTTP/\d\.\d (\d{3})};
    my ($r) = $res =~ m{^RateLimit:[^\r\n]*;r=(\d+)}mi;
    return ($code // 0) . ' ' . ($r // '-');
}
my $long = '{"max_tokens":1,"prompt":"' . ('x' x 1172) . '"}';
ok t_cmp(length $long, 1200, 'the long body is 1,200 bytes');
ok t_cmp(remaining(post_req('/p/llm.cgi', 'sk-p', $long)), '200 799',
         "[$mpm] HotLimitPromptEstimate 1: a token per byte: 1,201 reserved");
ok t_cmp(remaining(post_req('/m/llm.cgi', 'sk-p', $long)), '200 1699',
         "[$mpm] default estimate 4: 301 reserved");
# A body that is not read (text/plain): its announced length still counts
# for the prompt: 16 + 4,000 / 4 (main: 16).
(my $plain = post_req('/m/llm.cgi', 'sk-plain', 'x' x 4000))
    =~ s{application/json}{text/plain};
ok t_cmp(remaining($plain), '200 984',
         "[$mpm] a text/plain body of 4,000 bytes: DEFAULT + 1,000 for its prompt");

# The differential harness: 0 bodies where the module reserves less than
# PHP's json_decode reads (fixed seed; a few seconds).
my $out = `python3 $FindBin::Bin/support/php_reserve_diff.py 25 4000 2>&1`;
print STDERR "# $_\n" for grep { !/^\d+ bodies, 0 differences/ } split /\n/, $out;
ok t_cmp($out, qr/^\d+ bodies, 0 differences/m,
         'php_reserve_diff.py: the module reserves at least what PHP reads');

$h->stop;
