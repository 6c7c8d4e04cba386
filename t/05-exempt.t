# Exemptions: HotLimitExempt (a vhost exempting 127.0.0.1, and a CIDR block
# for addresses given by a trusted proxy) and the hotlimit-exempt
# environment variable set by SetEnvIf.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest qw(GET);
use HLTest;

plan tests => 8;

# --- HotLimitExempt 127.0.0.1 ::1 in the hl_exempt vhost, quota 1/1m ---------------
Apache::TestRequest::module('hl_exempt');
{
    my @codes = map { GET('/exvh/')->code } 1 .. 6;
    ok t_cmp("@codes", '200 200 200 200 200 200', 'HotLimitExempt 127.0.0.1: never 429');
}

# --- HotLimitExempt 198.51.100.0/24 behind a trusted proxy (hl_xff) -----------------
Apache::TestRequest::module('hl_xff');
{
    my @codes = map { GET('/xffex/', 'X-Forwarded-For' => '198.51.100.7')->code } 1 .. 4;
    ok t_cmp("@codes", '200 200 200 200', 'exempt CIDR (client from X-Forwarded-For): never 429');
    @codes = map { GET('/xffex/', 'X-Forwarded-For' => '203.0.113.77')->code } 1 .. 2;
    ok t_cmp("@codes", '200 429', 'an address outside the exempt block is limited');
}

# --- SetEnvIf X-Monitor "^let-me-in$" hotlimit-exempt, quota 1/1m -------------------
Apache::TestRequest::module('default');
{
    my @codes = map { GET('/exenv/', 'X-Monitor' => 'let-me-in')->code } 1 .. 5;
    ok t_cmp("@codes", '200 200 200 200 200', 'hotlimit-exempt set by SetEnvIf: never 429');
    ok t_cmp(GET('/exenv/')->code, 200, 'without the header: first admitted (exempt ones not counted)');
    ok t_cmp(GET('/exenv/')->code, 429, 'without the header: second rejected');
    ok t_cmp(GET('/exenv/', 'X-Monitor' => 'let-me-in')->code, 200,
             'with the header again: still admitted');
    ok t_cmp(GET('/exenv/', 'X-Monitor' => 'let-me-in-not')->code, 429,
             'a header value that does not match: rejected');
}
