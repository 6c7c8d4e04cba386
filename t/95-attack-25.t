# Issue 25's promises tried TOGETHER on the merged main, as an attacker
# (spec section 8), each on a private httpd:
#  A. a case-sensitive PHP JSON login (php-cli CGI, json_decode) sent as
#     text/plain, octet-stream or no type, with device cookies: the
#     attacker's ALICE cookies never open alice's locked line, whatever the
#     duplicate keys or escapes of the body; alice's own cookie does; no
#     account value reaches the error log (hotlimit at debug).
#  B. reserve=max_tokens on bodies a last-wins backend reads: duplicates as
#     text/plain, with no type, as a form type, chunked; and (failed on main
#     3adb40e, fixed here) a UTF-8 byte order mark and UTF-16, which
#     Python's json.loads() (Starlette, so vLLM) reads: all 20 were
#     admitted on 2,000 for 900 each, now 2; a body over HotLimitBodyLimit
#     under HotLimitBodyOverflow path was admitted at DEFAULT (18 of 20),
#     now 413 (HL03000).
#  C. keyed hashes: counters of a text/plain json: key and a norm=email
#     header key survive a full stop/start under HotLimitPersist On with the
#     generated secret; the status lookup folds the inbox; no raw value in
#     the log.
#  E. HotLimitLogRate with account-key refusals rotating from one address
#     and address refusals from another: fail2ban finds the flooder, never
#     the account-key address; the summary line names no address.
#  F. HotLimitSpoolLimit with a held param: form body and a held text/plain
#     json: body: a third spooling body gets 503; aborted clients give
#     their spool back.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(sleep);
use Apache::Test;
use Apache::TestUtil;
use HTTP::Request;
use IO::Socket::INET ();
use HotLimitTable;
use HLTest ();
use HLConc;

my $php = -x '/usr/bin/php' ? '/usr/bin/php' : undef;
plan tests => 32, sub { $php ? 1 : (print("# no php-cli\n"), 0) };
my $mpm = hl_mpm();
my $ua = LWP::UserAgent->new(timeout => 20, keep_alive => 0, max_redirect => 0);

# --- A. device cookies and JSON logins sent as anything ----------------------
my $login = <<"PHP";
#!$php
<?php
\$in = json_decode(file_get_contents('php://stdin'), true);
\$pw = ['alice' => 'right', 'ALICE' => 'mallory'];
\$u = is_array(\$in) ? (\$in['user'] ?? '') : '';
\$u = is_scalar(\$u) ? (string) \$u : '';
if (isset(\$pw[\$u]) && (\$in['password'] ?? '') === \$pw[\$u]) {
    echo "Status: 303 See Other\\r\\nLocation: /home\\r\\nContent-Type: text/plain\\r\\n\\r\\nwelcome \$u\\n";
} else {
    echo "Status: 403 Forbidden\\r\\nContent-Type: text/plain\\r\\n\\r\\nbad\\n";
}
PHP
my $h = start_httpd(name => 'attack-a', files => { 'jl/login.cgi' => $login },
    setup => sub { chmod 0755, $_[0]->dir . '/htdocs/jl/login.cgi' },
    conf => hl_cgi_xff_conf() . <<'CONF');
LogLevel info hotlimit:debug
<Location /jl>
    HotLimitQuota 3/1h by=json:user count=failures
    HotLimitDeviceCookie hl_device 1h
</Location>
CONF

my $n = 0;
sub addr { '203.0.113.' . (++$n % 250 + 1) }
sub jlogin {
    my ($srv, $body, $type, $from, $cookie) = @_;
    my $req = HTTP::Request->new(POST => $srv->url('/jl/login.cgi'),
        ['X-Forwarded-For' => $from, defined $type ? ('Content-Type' => $type) : (),
         defined $cookie ? (Cookie => "hl_device=$cookie") : ()], $body);
    my $res = $ua->request($req);
    sleep 0.15 if $res->code == 403;
    my ($tok) = map { /^hl_device=([^;]+)/ ? $1 : () } $res->header('Set-Cookie');
    return ($res->code . ($tok ? 'c' : ''), $tok);
}
my ($c, $legit) = jlogin($h, '{"user":"alice","password":"right"}', 'text/plain', '192.0.2.1');
ok t_cmp($c, '303c', "[$mpm] A: alice logs in with text/plain JSON, gets a cookie");
my @stolen;
for my $t (undef, 'application/octet-stream', 'text/plain') {
    my ($cc, $tok) = jlogin($h, '{"user":"ALICE","password":"mallory"}', $t, addr());
    push @stolen, $tok if $tok;
}
ok t_cmp(scalar @stolen, 3, "[$mpm] A: ALICE gets 3 cookies");
my @codes = map { (jlogin($h, qq({"user":"alice","password":"g$_"}), 'text/plain', addr()))[0] } 1 .. 4;
ok t_cmp("@codes", '403 403 403 429', "[$mpm] A: alice's line locked");
my @bodies = ('{"user":"alice","password":"x"}',
              '{"user":"ALICE","user":"alice","password":"x"}',
              '{"user":"alice","password":"x","user":"alice"}',
              '{"us\u0065r":"alice","password":"x"}',
              '{"user":"\u0061lice","password":"x"}',
              '{"user":["ALICE"],"user":"alice","password":"x"}');
@codes = ();
for my $b (@bodies) {
    for my $t (@stolen) { push @codes, (jlogin($h, $b, 'text/plain', addr(), $t))[0] }
}
ok t_cmp("@codes", join(' ', ('429') x (3 * @bodies)), "[$mpm] A: ALICE's cookies never open alice");
ok t_cmp((jlogin($h, '{"user":"alice","password":"right"}', undef, '192.0.2.1', $legit))[0], '303c',
         "[$mpm] A: alice's own cookie still works");
my $log = HotLimitTable::_slurp($h->error_log) // '';
my @leak = grep { /alice|mallory/i } split /\n/, $log;
ok t_cmp(scalar @leak, 0, "[$mpm] A: no account value in the log: @leak[0..($#leak > 2 ? 2 : $#leak)]");
$h->stop;

# --- B. reservations of JSON bodies sent as anything ---------------------------
my $llm = <<'CGI';
#!/usr/bin/perl
use strict;
my $body = '';
{ local $/; $body = <STDIN> // q(); }   # all of it: a CGI under mod_cgid that leaves a chunked body unread gets its answer reset
select undef, undef, undef, 1;
print "X-Tokens: 1000\r\nContent-Type: text/plain\r\n\r\nok\n";
CGI
my $b = start_httpd(name => 'attack-b', files => { 'm/llm.cgi' => $llm, 'o/llm.cgi' => $llm },
    setup => sub { chmod 0755, map { $_[0]->dir . "/htdocs/$_/llm.cgi" } qw(m o) },
    conf => hl_cgi_xff_conf() . <<'CONF');
HotLimitHeaders On
<Location /m/>
    HotLimitQuota 2000/1m by=header:Authorization cost=header:X-Tokens reserve=max_tokens:16
</Location>
<Location /o/>
    HotLimitBodyLimit 1K
    HotLimitBodyOverflow path
    HotLimitQuota 2000/1m by=header:Authorization cost=header:X-Tokens reserve=max_tokens:16
</Location>
CONF
my $k = 0;
for my $s (['text/plain', '{"max_tokens":1,"max_tokens":900}'],
           [undef, '{"max_tokens":1,"max_tokens":900}'],
           ['application/x-www-form-urlencoded', '{"max_tokens":1,"max_tokens":900}'],
           ['application/json', "\xEF\xBB\xBF" . '{"max_tokens":900}'],
           ['application/json; charset=utf-8', ' {"max_completion_tokens":"900"} '],
           ['text/plain', "\xEF\xBB\xBF" . '{"max_tokens":900}'],
           ['application/json', do { require Encode; Encode::encode('UTF-16LE', '{"max_tokens":900}') }]) {
    my ($type, $json) = @$s;
    ++$k;
    my $req = "POST /m/llm.cgi HTTP/1.0\r\nHost: localhost\r\nAuthorization: k$k\r\n"
        . (defined $type ? "Content-Type: $type\r\n" : '')
        . "Content-Length: " . length($json) . "\r\n\r\n$json";
    my $count = HLTest::hl_at_once($b->port, $req, 20);
    ok t_cmp(($count->{200} // 0) . ' ' . ($count->{429} // 0), '2 18',
             "[$mpm] B: " . ($type // 'no type') . " $json: 20 at once on 2,000 (" . join(',', %$count) . ')');
}
# A chunked body (no Content-Length), and one over HotLimitBodyLimit under
# HotLimitBodyOverflow path: the backend reads it whole.
sub chunked {
    my ($path, $key, $type, $json) = @_;
    return "POST $path HTTP/1.1\r\nHost: localhost\r\nAuthorization: $key\r\nConnection: close\r\n"
        . "Content-Type: $type\r\nTransfer-Encoding: chunked\r\n\r\n"
        . sprintf('%x', length $json) . "\r\n$json\r\n0\r\n\r\n";
}
my $count = HLTest::hl_at_once($b->port, chunked('/m/llm.cgi', 'kc1', 'text/plain', '{"max_tokens":1,"max_tokens":900}'), 20);
ok t_cmp(($count->{200} // 0) . ' ' . ($count->{429} // 0), '2 18', "[$mpm] B: chunked text/plain: 20 at once on 2,000 (" . join(',', %$count) . ')');
my $padded = '{"pad":"' . ('x' x 1100) . '","max_tokens":1,"max_tokens":900}';
$count = HLTest::hl_at_once($b->port, chunked('/o/llm.cgi', 'kc2', 'application/json', $padded), 20);
ok t_cmp($count->{413} // 0, 20, "[$mpm] B: a chunked body over HotLimitBodyLimit under path: 413, all 20 ("
         . join(',', %$count) . ')');
(my $cl = "POST /o/llm.cgi HTTP/1.0\r\nHost: localhost\r\nAuthorization: kc3\r\n"
        . "Content-Type: application/json\r\nContent-Length: " . length($padded) . "\r\n\r\n$padded");
$count = HLTest::hl_at_once($b->port, $cl, 20);
ok t_cmp($count->{413} // 0, 20, "[$mpm] B: ... one with Content-Length too (" . join(',', %$count) . ')');
ok t_cmp(scalar(grep { /HL03000: reserve=max_tokens: body over HotLimitBodyLimit/ } $b->log_lines(0)) > 0 ? 1 : 0, 1,
         "[$mpm] B: HL03000 says why");
$b->stop;

# --- C. keyed hashes: persisted counters, logs, lookup -------------------------
my $cc = start_httpd(name => 'attack-c', files => { 'p/f.txt' => "ok\n", 'e/f.txt' => "ok\n" },
    conf => hl_cgi_xff_conf() . <<'CONF');
LogLevel info
HotLimitPersist On
<Location /p/>
    HotLimitQuota 2/1h by=json:user
</Location>
<Location /e/>
    HotLimitQuota 1/1h by=header:X-Mail norm=email
</Location>
CONF
sub cpost {
    my ($path, $body, $type) = @_;
    my $req = HTTP::Request->new(POST => $cc->url($path),
        [defined $type ? ('Content-Type' => $type) : ()], $body);
    return $ua->request($req)->code;
}
ok t_cmp(join(' ', map { cpost('/p/f.txt', '{"user":"Zebulon"}', 'text/plain') } 1 .. 3),
         '200 200 429', "[$mpm] C: Zebulon 2/1h over text/plain JSON");
ok t_cmp(join(' ', map { $cc->get('/e/f.txt', 'X-Mail' => $_)->code }
              'Zeb.U.Lon@gmail.com', 'zebulon+x@googlemail.com.'),
         '200 429', "[$mpm] C: one Gmail inbox");
# The status page's lookup folds the name as the line does.
sub lookup_key {
    my $j = HLTest::hl_json($ua->get($cc->url("/hotlimit-status?json&lookup=$_[0]"))) || {};
    my ($k) = grep { ($_->{route} // '') eq '/e/' } @{ $j->{lookup}{keys} || [] };
    return $k ? $k->{key} // '' : '';
}
my $lk = lookup_key('zebulon@gmail.com');
ok t_cmp($lk ne '' && $lk eq lookup_key('Z.E.B.ULON%2Bsms@GoogleMail.com.') ? 1 : "'$lk' vs '" . lookup_key('Z.E.B.ULON%2Bsms@GoogleMail.com.') . "'",
         1, "[$mpm] C: the lookup finds one key for two spellings of the inbox");
$cc->stop(keep => 1);
$cc->start;
ok t_cmp(cpost('/p/f.txt', '{"user":"Zebulon"}', 'text/plain'), 429,
         "[$mpm] C: after a full stop/start (HotLimitPersist On, generated secret) Zebulon is still refused");
ok t_cmp($cc->get('/e/f.txt', 'X-Mail' => 'zebulon@gmail.com')->code, 429,
         "[$mpm] C: ... and the inbox");
my @cleak = grep { /zeb/i } $cc->log_lines(0);
ok t_cmp(scalar @cleak, 0, "[$mpm] C: no account value in the log: @cleak[0..($#cleak > 2 ? 2 : $#cleak)]");
$cc->stop;

# --- E. HotLimitLogRate: account-key refusals and address refusals mixed ------
my $e = start_httpd(name => 'attack-e', conf => hl_cgi_xff_conf() . <<'CONF');
MaxKeepAliveRequests 0
LogLevel info
<Location /ip/>
    HotLimitQuota 1/1h
</Location>
<Location /acct/>
    HotLimitQuota 1/1h by=header:X-User
</Location>
<Location /j/>
    HotLimitQuota 1/1h by=json:user
</Location>
CONF
my $rot = '192.0.2.77';        # refused only on account keys, many of them
my $fl = '203.0.113.88';       # refused on its address
my $eua = LWP::UserAgent->new(timeout => 20, keep_alive => 4);
my %got;
for my $i (1 .. 600) {
    my $u = "acct$i";
    $got{$eua->get($e->url('/acct/'), 'X-Forwarded-For' => $rot, 'X-User' => $u)->code}++ for 1 .. 2;
    my $req = HTTP::Request->new(POST => $e->url('/j/'), ['X-Forwarded-For' => $rot,
                                 'Content-Type' => 'text/plain'], qq({"user":"j$i"}));
    $got{$eua->request($req)->code}++ for 1 .. 2;
    $got{$eua->get($e->url('/ip/'), 'X-Forwarded-For' => $fl)->code}++ if $i % 2;
}
ok t_cmp("200=" . ($got{200} // 0) . " 404=" . ($got{404} // 0) . " 429=" . ($got{429} // 0),
         qr/^200=\d+ 404=\d+ 429=\d+$/, "[$mpm] E: the mixed flood ran");
my $f2b = -x '/usr/bin/fail2ban-regex' ? '/usr/bin/fail2ban-regex' : '';
my $filter = "$FindBin::Bin/../conf-examples/fail2ban/filter.d/hotlimit.conf";
# Wait for a summary, brought by the flooder's next refusal 10 s on.
my $summ = HotLimitTable::wait_until(sub {
    $eua->get($e->url('/ip/'), 'X-Forwarded-For' => $fl);
    my ($l) = grep { /HL02100: / } $e->log_lines(0);
    return $l;
}, 20) // '';
ok t_cmp($summ, qr/HL02100: \d+ refusals \(\d+ of new keys\) not logged in full: over HotLimitLogRate 10 a second$/,
         "[$mpm] E: the account keys' refusals over the rate are summed, naming no address");
my $res = $f2b ? `$f2b -v '@{[$e->error_log]}' '$filter' 2>&1` : '';
ok t_cmp($res =~ /^\|\s+\Q$fl\E\s/m ? 1 : 0, 1, "[$mpm] E: fail2ban finds the flooding address");
ok t_cmp($res =~ /^\|\s+\Q$rot\E\s/m ? 1 : 0, 0, "[$mpm] E: fail2ban never finds the account-key address");
ok t_cmp(scalar(grep { /HL02100: .*\Q$rot\E/ } $e->log_lines(0)), 0, "[$mpm] E: no summary names it");
$e->stop;

# --- F. HotLimitSpoolLimit: param:, json: and concurrency bodies at once -------
my $sp = start_httpd(name => 'attack-f', conf => <<'CONF',
HotLimitBodyMemory 4K
HotLimitSpoolLimit 64K
<Location /form>
    HotLimitQuota 100/1m by=param:user
</Location>
<Location /json>
    HotLimitQuota 100/1m by=json:user
</Location>
<Location /up>
    HotLimitConcurrency 10 by=header:X-Key
</Location>
CONF
    files => { 'form/f.txt' => "ok\n", 'json/f.txt' => "ok\n", 'up/f.txt' => "ok\n" });
sub spool { my $st = $sp->status || {}; return $st->{spool} || {} }
# Opens a POST of $path, 40K body of type $type, $sent bytes sent.
sub held {
    my ($path, $type, $prefix, $sent) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $sp->port,
                                  Proto => 'tcp', Timeout => 10) or die "connect: $!";
    binmode $s;
    $s->autoflush(1);
    my $body = $prefix . ('y' x (40960 - length $prefix));
    print {$s} "POST $path HTTP/1.1\r\nHost: localhost\r\nX-Key: U\r\nContent-Type: $type\r\n"
             . "Content-Length: 40960\r\nConnection: close\r\n\r\n" . substr($body, 0, $sent);
    return $s;
}
my @h3 = (held('/form/f.txt', 'application/x-www-form-urlencoded', 'user=alice&pad=', 30720),
          held('/json/f.txt', 'text/plain', '{"user":"alice","pad":"', 30720));
HotLimitTable::wait_until(sub { (spool()->{bytes} // 0) >= 2 * 26624 }, 5);
my $sb = spool()->{bytes} // 0;
ok t_cmp($sb, 2 * 26624, "[$mpm] F: a held form body and a held text/plain JSON body spool 2 x 26K");
my $third = held('/up/f.txt', 'application/octet-stream', '', 40960);
ok t_cmp(hl_answer($third), 503, "[$mpm] F: a third body needing spool beyond 64K: 503");
close $third;
close $_ for @h3;
ok t_cmp(HotLimitTable::wait_until(sub { (spool()->{bytes} // -1) == 0 }, 5) ? 1 : 0, 1,
         "[$mpm] F: aborted clients give their spool back (" . (spool()->{bytes} // 'none') . ')');
my $ok = held('/form/f.txt', 'application/x-www-form-urlencoded', 'user=bob&pad=', 40960);
ok t_cmp(hl_answer($ok), 200, "[$mpm] F: then a form body gets in");
close $ok;
$sp->stop;
