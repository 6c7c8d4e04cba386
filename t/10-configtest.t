# "apachectl configtest" (httpd -t) rejects bad directive values with a
# message naming the directive and the bad token, and accepts a good
# configuration. Each case is a small generated config that loads the same
# modules as the test server (the base config t/run-httpd-tests.sh wrote).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use HLTest;

my $base = defined $ENV{HOTLIMIT_TEST_WORK} && defined $ENV{HOTLIMIT_TEST_MPM}
    ? "$ENV{HOTLIMIT_TEST_WORK}/base-$ENV{HOTLIMIT_TEST_MPM}.conf" : '';

# [ what, config lines, directive, the bad token as it must appear ]
my $loc = sub { "<Location /a>\n    $_[0]\n</Location>" };
my @bad = (
    [ 'prompt estimate 0', $loc->('HotLimitPromptEstimate 0'),       'HotLimitPromptEstimate', '0' ],
    [ 'prompt estimate x', 'HotLimitPromptEstimate 4x',              'HotLimitPromptEstimate', '4x' ],
    [ 'zero count',        $loc->('HotLimitQuota 0/1m'),             'HotLimitQuota',      '0/1m' ],
    [ 'negative count',    $loc->('HotLimitQuota -1/1m'),            'HotLimitQuota',      '-1/1m' ],
    [ 'unknown unit',      $loc->('HotLimitQuota 5/1x'),             'HotLimitQuota',      '5/1x' ],
    [ 'zero window',       $loc->('HotLimitQuota 5/0s'),             'HotLimitQuota',      '5/0s' ],
    [ 'unknown by=',       $loc->('HotLimitQuota 5/1m by=foo'),      'HotLimitQuota',      'foo' ],
    [ 'unknown algo=',     $loc->('HotLimitQuota 5/1m algo=leaky'),  'HotLimitQuota',      'leaky' ],
    [ 'unknown count=',    $loc->('HotLimitQuota 5/1m count=maybe'), 'HotLimitQuota',      'maybe' ],
    [ 'garbage',           $loc->('HotLimitQuota garbage'),          'HotLimitQuota',      'garbage' ],
    [ 'delay= without algo=gcra', $loc->('HotLimitQuota 2/1s delay=0'), 'HotLimitQuota', 'delay=0' ],
    [ 'bad queue=',        $loc->('HotLimitConcurrency 2 queue=many'), 'HotLimitConcurrency', 'many' ],
    [ 'bad wait=',         $loc->('HotLimitConcurrency 2 queue=3 wait=soon'), 'HotLimitConcurrency', 'soon' ],
    [ 'bad HotLimitMaxWaiting', 'HotLimitMaxWaiting -3',             'HotLimitMaxWaiting', '-3' ],
    [ 'garbage after a window', $loc->('HotLimitQuota 5/1m 3/x/y'),  'HotLimitQuota',      '3/x/y' ],
    [ 'slots not a number', 'HotLimitSlots abc',                     'HotLimitSlots',      'abc' ],
    [ 'slots too few',     'HotLimitSlots 10',                       'HotLimitSlots',      '10' ],
    [ 'IPv6 prefix 0',     'HotLimitIPv6Prefix 0',                   'HotLimitIPv6Prefix', '0' ],
    [ 'IPv6 prefix 129',   'HotLimitIPv6Prefix 129',                 'HotLimitIPv6Prefix', '129' ],
    [ 'IPv6 prefix text',  'HotLimitIPv6Prefix x64',                 'HotLimitIPv6Prefix', 'x64' ],
    [ 'bad CIDR',          'HotLimitExempt 10.0.0.0/33',             'HotLimitExempt',     '10.0.0.0/33' ],
    [ 'unknown cost=',     $loc->('HotLimitQuota 5/1m cost=tokens'), 'HotLimitQuota',      'tokens' ],
    [ 'reserve= without cost=', $loc->('HotLimitQuota 5/1m reserve=2'), 'HotLimitQuota',  'reserve=' ],
    [ 'reserve=0',         $loc->('HotLimitQuota 5/1m cost=usage reserve=0'), 'HotLimitQuota', '0' ],
    [ 'bad reserve= default', $loc->('HotLimitQuota 5/1m cost=usage reserve=max_tokens:x'),
                                                                     'HotLimitQuota',      'max_tokens:x' ],
    [ 'ban count zero',    'HotLimitBan 0/10m 1h',                   'HotLimitBan',        '0/10m' ],
    [ 'ban bare duration', 'HotLimitBan 20/10m 3600',                'HotLimitBan',        '3600' ],
    [ 'Redis prefix with a brace (it would move the hash tag)',
      'HotLimitStore redis://127.0.0.1:6379?prefix=a{b}',           'HotLimitStore',      'a{b}' ],
    [ 'Redis prefix over 64 bytes',
      'HotLimitStore redis://127.0.0.1:6379?prefix=' . ('p' x 65),  'HotLimitStore',      'p' x 65 ],
    [ 'four HotLimitQuota lines in one section',
      $loc->("HotLimitQuota 1/1m\n    HotLimitQuota 2/1m\n    HotLimitQuota 3/1m\n    HotLimitQuota 4/1m"),
                                                                     'HotLimitQuota',      '4/1m' ],
    [ 'lease over 10000',  'HotLimitStoreLease 10001',               'HotLimitStoreLease', '10001' ],
    [ 'unknown norm=',     $loc->('HotLimitQuota 5/1m by=param:u norm=upper'), 'HotLimitQuota', 'upper' ],
    [ 'norm= on an address key', $loc->('HotLimitQuota 5/1m norm=digits'), 'HotLimitQuota', 'norm=digits' ],
    [ 'unknown error format', $loc->('HotLimitErrorFormat xml'),     'HotLimitErrorFormat', 'xml' ],
    [ 'unknown refusal log mode', $loc->('HotLimitLogRefusals sometimes'), 'HotLimitLogRefusals', 'sometimes' ],
    # Request bodies:
    [ 'body memory under 4K', 'HotLimitBodyMemory 1K',              'HotLimitBodyMemory', '1K' ],
    [ 'body memory over 64M', 'HotLimitBodyMemory 65M',             'HotLimitBodyMemory', '65M' ],
    [ 'spool limit negative', 'HotLimitSpoolLimit -1',               'HotLimitSpoolLimit', '-1' ],
    [ 'spool limit unit',     'HotLimitSpoolLimit 5T',               'HotLimitSpoolLimit', '5T' ],
    [ 'spool limit over 1T',  'HotLimitSpoolLimit 1025G',            'HotLimitSpoolLimit', '1025G' ],
    [ 'body limit unit',   $loc->('HotLimitBodyLimit 8G'),           'HotLimitBodyLimit',  '8G' ],
    [ 'body limit in M beyond 64 bits', $loc->('HotLimitBodyLimit 9000000000000000M'),
                                                                     'HotLimitBodyLimit',  '9000000000000000M' ],
    [ 'unknown overflow',  $loc->('HotLimitBodyOverflow drop'),      'HotLimitBodyOverflow', 'drop' ],
);
my $good = join "\n",
    'HotLimitSlots 1024',
    'HotLimitIPv6Prefix 56',
    'HotLimitExempt 10.0.0.0/8 2001:db8::/32',
    'HotLimitHeaders On',
    'HotLimitBan 20/10m 1h',
    'HotLimitStoreLease 100',
    $loc->("HotLimitQuota 5/1m 100/1h by=header:X-Api-Key algo=fixed count=all\n"
           . "    HotLimitDryRun On\n    HotLimitHeaders Off"),
    "<Location /a/health>\n    HotLimitEngine Off\n    HotLimitLogRefusals off\n</Location>",
    "<Location /st>\n    SetHandler hotlimit-status\n    HotLimitStatus On\n</Location>",
    'HotLimitLogRefusals all',
    "<LocationMatch \"^/b/[0-9]+\$\">\n    HotLimitQuota 3/500ms 10/1d by=cookie:sid\n</LocationMatch>",
    "<Location /llm>\n    HotLimitQuota 100/1m 1000/1h by=header:Authorization cost=header:X-LLM-Tokens\n</Location>",
    "<Location /login>\n    HotLimitQuota 5/1m 30/1h\n    HotLimitQuota 10/1h by=param:u\n</Location>",
    "<Location /sms>\n    HotLimitQuota 1/1m by=param:phone norm=digits\n"
    . "    HotLimitQuota 5/1h by=header:X-Mail norm=email\n    HotLimitErrorFormat json\n</Location>",
    'HotLimitBodyMemory 64K',
    'HotLimitSpoolLimit 1G',
    "<Location /form>\n    HotLimitBodyLimit 8M\n    HotLimitBodyOverflow path\n</Location>";

plan tests => 2 * @bad + 2 + 2 + 4 + 2 + 8, need { "the base config (run through t/run-httpd-tests.sh)" => -r $base };

my $httpd = Apache::Test::vars('httpd');
my $logs = hl_logs();
my $loads = do {
    open my $fh, '<', $base or die "$base: $!";
    join '', grep { /^\s*LoadModule\s/ } <$fh>;
};
my $n = 0;

# Writes a config with $body and runs httpd -t on it. Returns (exit, output).
# Without mod_slotmem_shm when the second argument is true.
sub configtest {
    my ($body, $no_slotmem) = @_;
    my $load = $no_slotmem ? join('', grep { !/slotmem_shm/ } split /^/, $loads)
                           : $loads;
    my $file = "$logs/configtest-" . ++$n . '.conf';
    open my $fh, '>', $file or die "$file: $!";
    print {$fh} <<"EOC";
ServerRoot "$logs"
PidFile "$logs/configtest.pid"
ErrorLog "$logs/configtest_error_log"
DefaultRuntimeDir "$logs"
ServerName localhost
Listen 127.0.0.1:1
$load
$body
EOC
    close $fh;
    my $out = `$httpd -t -f $file 2>&1`;
    return ($? >> 8, $out);
}

for my $c (@bad) {
    my ($what, $body, $directive, $token) = @$c;
    my ($rc, $out) = configtest($body);
    ok t_cmp($rc != 0 ? 1 : 0, 1, "$what: configtest fails");
    ok t_cmp($out, qr/^\Q$directive\E: .*'\Q$token\E'/m,
             "$what: the message names $directive and '$token'");
}
{
    my ($rc, $out) = configtest($good);
    ok t_cmp($rc, 0, 'a good configuration passes');
    ok t_cmp($out, qr/Syntax OK/, 'Syntax OK');
}
{
    # Outside a section HotLimitStatus On covers the whole server (never
    # limited or banned): allowed, with a warning.
    my ($rc, $out) = configtest('HotLimitStatus On');
    ok t_cmp($rc, 0, 'HotLimitStatus On at server level passes');
    ok t_cmp($out, qr/HL01183: HotLimitStatus On outside a <Location>.*no request of this server is limited or banned/,
             '... with a warning (HL01183)');
}
{
    # reserve= (issue 19): a cost= quota without it passes with a warning
    # (concurrent requests can overspend); with it, no warning.
    my ($rc, $out) = configtest($loc->('HotLimitQuota 1000/1m cost=usage'));
    ok t_cmp($rc, 0, 'a cost= quota without reserve= passes');
    ok t_cmp($out, qr/HL01650: HotLimitQuota with cost= but no reserve=.*concurrent requests can spend more than the budget/,
             '... with a warning (HL01650)');
    ok t_cmp($out, qr/HL01650: .*an answer whose cost cannot be read .* is charged 1/,
             '... which says what an unreadable answer costs (issue 25)');
    ($rc, $out) = configtest($loc->('HotLimitQuota 1000/1m cost=header:X-Tokens reserve=max_tokens:2048'));
    ok t_cmp($rc . ($out =~ /HL01650/ ? ' warned' : ''), '0',
             'with reserve=max_tokens:2048: passes, no warning');
}
{
    my ($rc, $out) = configtest('HotLimitQuota 5/1m');
    ok t_cmp($rc != 0 ? 1 : 0, 1, 'HotLimitQuota outside a directory section fails');
    ok t_cmp($out, qr/HotLimitQuota not allowed here/, '... as "not allowed here"');
}

# --- what a start would need: configtest fails naming it (spec section 8),
# so that `systemctl reload` (a graceful restart) never takes a running
# server down ---------------------------------------------------------------
my $table = "$logs/configtest-table.json";
{
    open my $fh, '>', $table or die "$table: $!";
    print {$fh} qq({"routes": {"/a": {"max": 5, "window": 60}}}\n);
    close $fh;
}
{
    my ($rc, $out) = configtest("HotLimitQuotaTable $table", 1);
    ok t_cmp($rc != 0 ? 1 : 0, 1, 'a table without mod_slotmem_shm: configtest fails');
    ok t_cmp($out, qr/HL00010: .*mod_slotmem_shm/, '... naming mod_slotmem_shm');
}
{
    my ($rc, $out) = configtest("HotLimitQuotaTable $table");
    ok t_cmp($rc, 0, 'the same table with mod_slotmem_shm passes');
}
{
    my ($rc, $out) = configtest("HotLimitQuotaTable $logs/no-such-table.json");
    ok t_cmp($rc != 0 ? 1 : 0, 1, 'a missing table file: configtest fails');
    ok t_cmp($out, qr/HL00012: .*no-such-table\.json/, '... naming the file');
}
{
    my $fifo = "$logs/configtest-fifo.json";
    unlink $fifo;
    system('mkfifo', $fifo) == 0 or die "mkfifo: $!";
    my $t0 = time;
    my ($rc, $out) = configtest("HotLimitQuotaTable $fifo");
    ok t_cmp($rc != 0 ? 1 : 0, 1, 'a FIFO as table file: configtest fails');
    ok t_cmp($out, qr/HL00012: .*configtest-fifo\.json/, '... naming it');
    ok t_cmp(time - $t0 < 10 ? 1 : 0, 1, '... at once, without blocking on the FIFO');
    unlink $fifo;
}
