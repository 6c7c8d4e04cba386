# A quota table fetched from a URL (HotLimitQuotaTable http://...) served
# by a real HTTP server the test starts on 127.0.0.1, with
# HotLimitTableFailure open: httpd starts while the URL is down and the
# rules apply once it is up; conditional GET (If-None-Match -> 304); a
# change applies within HotLimitReloadInterval + 1 s; HTTP 500, connection
# refused and a hanging server are failures that drop the rules; a hanging
# server never delays a request (HotLimitFetchTimeout 1).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(time sleep);
use HotLimitTable;

plan tests => 34, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
sub rule { return { max => $_[0], window => $_[1] // 60 } }

my %routes = ('/u' => rule(2), '/v' => rule(1));

# The table server's port is chosen now, but it is not running yet.
my $ts = table_server(name => 'url-open-srv', start => 0, body => { routes => \%routes });
my $h = start_httpd(name => 'url-open', conf => <<"CONF");
HotLimitQuotaTable ${\ $ts->url}
HotLimitReloadInterval 1
HotLimitFetchTimeout 1
HotLimitTableFailure open
CONF

# 1. httpd starts and serves although the URL is down.
ok t_cmp($h->codes('/index.html', 1), '200', "[$mpm] httpd serves while the table URL is down");
ok t_cmp($h->codes('/u', 3), '200 200 200', "[$mpm] no table yet: /u not limited");
ok t_cmp($h->wait_log(qr/HL00404/, 0, 5),
         qr/HL00404: quota table http:\/\/127\.0\.0\.1:\d+\/table\.json failed: connect failed/,
         "[$mpm] the failed fetch is logged (HL00404 connect failed)");

# 2. The server comes up: the rules apply within interval + 1 s.
$h->change_applies(sub { $ts->start }, 'table fetched once the server is up');
my ($gen, $g);
ok t_cmp($h->codes('/u', 3), '200 200 429', "[$mpm] /u limited by the fetched table (2/60s)");

# 3. Conditional GET: later fetches carry If-None-Match and get 304s.
wait_until(sub { grep { $_->{status} eq '304' } $ts->requests }, 4);
my @req = $ts->requests;
my ($first) = grep { $_->{status} eq '200' } @req;
my @c304 = grep { $_->{status} eq '304' } @req;
ok t_cmp($first && $first->{line}, 'GET /table.json HTTP/1.1', "[$mpm] the table is fetched with a GET");
ok t_cmp($first && $first->{inm}, '', "[$mpm] the first fetch is unconditional");
ok t_cmp(scalar(@c304) >= 1 ? 1 : 0, 1, "[$mpm] later fetches answered 304 (" . scalar(@c304) . ")");
ok t_cmp($c304[0] && $c304[0]{inm}, qr/^"[0-9a-f]{32}"$/, "[$mpm] ... because they send If-None-Match");
ok t_cmp($c304[0] && $c304[0]{ims}, qr/GMT$/, "[$mpm] ... and If-Modified-Since");

# 4. The table changes on the server: in force within interval + 1 s.
$h->change_applies(sub { $ts->set_body({ routes => { %routes, '/u2' => rule(1) } }) },
                   'changed table fetched');
ok t_cmp($h->codes('/u2', 2), '200 429', "[$mpm] the new route /u2 applies");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] /u (unchanged) kept its counter");

# 5. HTTP 500: a failure; open drops the rules.
my $off = $h->log_offset;
$ts->set_mode('500');
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5),
         qr/HL00404: .* failed: HTTP status 500; its rules are dropped \(HotLimitTableFailure open\)/,
         "[$mpm] HTTP 500: HL00404 logged");
ok t_cmp($h->codes('/u', 2), '200 200', "[$mpm] open: /u admitted after the 500");

# 6. The server recovers with the very same document: the rules return.
$gen = $h->generation;
$ts->set_mode('ok');
$g = $h->wait_generation($gen, 4);
ok t_cmp($g > $gen ? 1 : 0, 1,
        "[$mpm] same document served again after the failure: rules back");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] /u limited again after the recovery");
# (A different document always comes back.)
$gen = $h->generation;
$ts->set_body({ routes => { %routes, '/u3' => rule(1) } });
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] a changed document restores the table");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] /u limited again");

# 7. Connection refused: a failure; open drops the rules.
$off = $h->log_offset;
$ts->set_mode('down');
ok t_cmp($h->wait_log(qr/HL00404/, $off, 5),
         qr/HL00404: .* failed: connect failed .*; its rules are dropped/,
         "[$mpm] connection refused: HL00404 logged");
ok t_cmp($h->codes('/u', 2), '200 200', "[$mpm] open: /u admitted while the server is down");
$gen = $h->generation;
$ts->set_body({ routes => { %routes, '/u4' => rule(1) } });
$ts->set_mode('ok');
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] server back: table fetched again");
ok t_cmp($h->codes('/u', 1), '429', "[$mpm] /u limited again");

# 8. A hanging server: no request waits for it, and the fetch times out.
$off = $h->log_offset;
my $nreq = () = $ts->requests;
$ts->set_mode('hang');
ok t_cmp(wait_until(sub { grep { $_->{status} eq 'hang' } $ts->requests($nreq) }, 3) ? 1 : 0, 1,
         "[$mpm] a fetch is hanging on the table server");
my ($slowest, @codes) = (0);
for my $i (1 .. 20) {
    my $t = time;
    my $res = $h->get($i % 2 ? '/index.html' : '/v');
    my $d = time - $t;
    $slowest = $d if $d > $slowest;
    push @codes, $res->code;
    sleep 0.1;                  # spread the 20 requests over ~2 fetch attempts
}
ok t_cmp($slowest < 0.5 ? 1 : 0, 1,
         "[$mpm] 20 requests while the table server hangs, slowest " . sprintf('%.3f', $slowest) . " s");
ok t_cmp(scalar(grep { $_ == 200 || $_ == 429 } @codes), 20, "[$mpm] ... all of them answered");
ok t_cmp($h->wait_log(qr/HL00404/, $off, 4),
         qr/HL00404: .* failed: timed out after 1 s \(.*\); its rules are dropped/,
         "[$mpm] hanging server: HL00404 'timed out'");
my @hung = grep { $_->{status} eq 'hang' } $ts->requests($nreq);
ok t_cmp(scalar(@hung) >= 2 ? 1 : 0, 1, "[$mpm] the fetcher kept retrying every interval (" . scalar(@hung) . " hung fetches)");
my $st = $h->status;
ok t_cmp($st->{table}{last_result}, 'failed', "[$mpm] status: last_result failed");
ok t_cmp($st->{table}{message}, qr/timed out/, "[$mpm] status: the message says why");

# 9. It answers again: the table comes back.
$gen = $h->generation;
$ts->set_body({ routes => { %routes, '/u5' => rule(1) } });
$ts->set_mode('ok');
ok t_cmp($h->wait_generation($gen, 5) > $gen ? 1 : 0, 1, "[$mpm] server answering again: table back");
ok t_cmp($h->codes('/u5', 2), '200 429', "[$mpm] /u5 applies");
$h->stop;
$ts->stop;
