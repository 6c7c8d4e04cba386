# A URL quota table with HotLimitTableFailure last-good: HTTP 500,
# connection refused and a hanging server are logged failures, and the
# last good table stays in force through all of them.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(time sleep);
use HotLimitTable;

plan tests => 21, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
sub rule { return { max => $_[0], window => $_[1] // 60 } }

my $ts = table_server(name => 'url-lg-srv', body => { routes => {
    '/u' => rule(2), '/v' => rule(1), '/x' => rule(1), '/y' => rule(1) } });
my $h = start_httpd(name => 'url-lastgood', conf => <<"CONF");
HotLimitQuotaTable ${\ $ts->url}
HotLimitReloadInterval 1
HotLimitFetchTimeout 1
HotLimitTableFailure last-good
CONF

# The first fetch runs in the background, right after the start.
ok t_cmp($h->wait_generation(0, 3) > 0 ? 1 : 0, 1, "[$mpm] table fetched in the background");
ok t_cmp($h->codes('/u', 3), '200 200 429', "[$mpm] /u limited (2/60s)");

# HTTP 500.
my $off = $h->log_offset;
my $gen = $h->generation;
$ts->set_mode('500');
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5),
         qr/HL00404: .* failed: HTTP status 500; the last good table stays \(HotLimitTableFailure last-good\)/,
         "[$mpm] HTTP 500: HL00404 logged");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] last-good: /u still limited after the 500");
ok t_cmp($h->codes('/v', 2), '200 429', "[$mpm] last-good: /v (fresh) limited by the last good table");

# Connection refused (the server process is gone).
$off = $h->log_offset;
$ts->stop;
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5),
         qr/HL00404: .* failed: connect failed .*; the last good table stays/,
         "[$mpm] connection refused: HL00404 logged");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] last-good: /u still limited while the server is down");
ok t_cmp($h->codes('/x', 2), '200 429', "[$mpm] last-good: /x (fresh) limited too");

# A hanging server: a timeout, requests not delayed, old table kept.
$off = $h->log_offset;
$ts->set_mode('hang');
$ts->start;
my $slowest = 0;
my @codes;
for my $i (1 .. 20) {
    my $t = time;
    push @codes, $h->get($i == 20 ? '/y' : '/index.html')->code;
    my $d = time - $t;
    $slowest = $d if $d > $slowest;
    sleep 0.1;
}
ok t_cmp($slowest < 0.5 ? 1 : 0, 1,
         "[$mpm] 20 requests while the table server hangs, slowest " . sprintf('%.3f', $slowest) . " s");
ok t_cmp($h->wait_log(qr/HL00404/, $off, 4),
         qr/HL00404: .* failed: timed out after 1 s .*; the last good table stays/,
         "[$mpm] hanging server: HL00404 'timed out'");
ok t_cmp(scalar(grep { $_->{status} eq 'hang' } $ts->requests) >= 1 ? 1 : 0, 1,
         "[$mpm] the table server saw the hanging fetch");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] last-good: /u still limited after the timeout");
ok t_cmp($h->codes('/y', 1), '429', "[$mpm] last-good: /y counted during the hang (1/60s)");
ok t_cmp($h->generation, $gen, "[$mpm] no failure published anything (generation $gen)");
my $st = $h->status;
ok t_cmp($st->{table}{last_result}, 'failed', "[$mpm] status: last_result failed");
ok t_cmp($st->{table}{reloads}{failed} >= 3 ? 1 : 0, 1,
         "[$mpm] status: $st->{table}{reloads}{failed} failed reloads counted");

# The server answers again with the same document: 304, the table stays.
my $nreq = () = $ts->requests;
$ts->set_mode('ok');
ok t_cmp(wait_until(sub { grep { $_->{status} eq '304' } $ts->requests($nreq) }, 4) ? 1 : 0, 1,
         "[$mpm] server back: the fetch is answered 304");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] /u still limited");
$st = $h->status;
ok t_cmp($st->{table}{last_result}, qr/^(ok|unchanged)$/,
        "[$mpm] status: last_result no longer 'failed' once the source answers again");

# A document over the size cap (8 MiB) is refused as a failure.
$off = $h->log_offset;
$ts->set_body('{"routes": {}, "pad": "' . ('x' x (9 << 20)) . '"}');
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5),
         qr/HL00404: .* failed: document larger than 8388608 bytes; the last good table stays/,
         "[$mpm] a 9 MiB document: HL00404 'larger than'");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] last-good: /u still limited");
$h->stop;
$ts->stop;
