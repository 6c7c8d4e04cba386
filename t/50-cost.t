# cost=header:NAME: a request is charged the integer its response carries
# in NAME (after the response); the decision is made before the handler on
# what is left, so a client with anything left is admitted (and may
# overshoot), and one with nothing left is refused. A missing or invalid
# header charges 1.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use Time::HiRes qw(sleep);
use HLTest qw(hl_php_module);

my $php = need_module(hl_php_module()) && need_apache_mpm('prefork');
plan tests => 9 + ($php ? 8 : 0);

# The charge happens in log_transaction, after the client has the answer:
# give it a moment before the next decision.
sub call {
    my ($path, $key) = @_;
    my $res = GET $path, Authorization => "Bearer $key";
    sleep 0.3;
    return $res;
}

# Returns r= of the RateLimit header (the tightest window's remaining).
sub remaining_of {
    my ($res) = @_;
    my ($r) = ($res->header('RateLimit') // '') =~ /;r=(\d+)/;
    return $r;
}

# --- static stand-in (both MPMs): every answer costs 40 ----------------------
my @c = map { call('/llm/s40.txt', 'static-a')->code } 1 .. 3;
ok t_cmp("@c", '200 200 200', '40 + 40 admitted, then admitted with 20 left');
my $res = call('/llm/s40.txt', 'static-a');
ok t_cmp($res->code, 429, 'after 120 of 100: refused');
my $ra = $res->header('Retry-After') // '';
ok t_cmp($ra =~ /^\d+$/ && $ra >= 1 && $ra <= 60 ? 1 : 0, 1,
         "Retry-After $ra within the minute window");
ok t_cmp(call('/llm/s40.txt', 'static-b')->code, 200, 'another key unaffected');

# A response without the header charges 1.
$res = call('/llm/none.txt', 'static-c');
ok t_cmp($res->code, 200, 'no header: admitted');
ok t_cmp(remaining_of($res), 99, 'first request: 99 left after it');
$res = call('/llm/none.txt', 'static-c');
ok t_cmp(remaining_of($res), 98, 'charged 1: 98 left after the second');
$res = call('/llm/s40.txt', 'static-c');
ok t_cmp(remaining_of($res), 97, 'third admitted with 98 left');
$res = call('/llm/none.txt', 'static-c');
ok t_cmp(remaining_of($res), 57, 'the 40 were charged: 58 left');

exit 0 unless $php;

# --- PHP stand-in (prefork): the tokens come from the application ------------
@c = map { call("/llm/llm.php?tokens=$_", 'php-a')->code } 60, 30;
ok t_cmp("@c", '200 200', '60 + 30 tokens admitted');
$res = call('/llm/llm.php?tokens=50', 'php-a');
ok t_cmp($res->code, 200, '10 left: admitted, charges 50 (overshoot)');
ok t_cmp($res->content, qr/answer/, 'the application answered');
$res = call('/llm/llm.php?tokens=1', 'php-a');
ok t_cmp($res->code, 429, 'nothing left: refused before PHP');
ok t_cmp(($res->header('Retry-After') // '') =~ /^\d+$/ ? 1 : 0, 1,
         'with Retry-After');
ok t_cmp(call('/llm/llm.php?tokens=5', 'php-b')->code, 200,
         'another API key unaffected');
call('/llm/llm.php?raw=abc', 'php-c');
call('/llm/llm.php?raw=-7', 'php-c');
$res = call('/llm/llm.php', 'php-c');
ok t_cmp(remaining_of($res), 97, 'invalid values charge 1 each');
call('/llm/llm.php?raw=99999999999999', 'php-d');
ok t_cmp(call('/llm/llm.php', 'php-d')->code, 429,
         'an absurd value is capped (the window is spent, not wrapped)');
