# Redirects of a URL quota table (issue 6, defect 11): the fetch follows a
# redirect only within the origin (scheme, host, port) of the configured
# URL. A redirect to another origin is refused (HL00501) before any request
# goes there, so the other server never sees the conditional-GET validators;
# it is a table failure handled by HotLimitTableFailure (here open).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(time sleep);
use HotLimitTable;

plan tests => 19, need need_module('mod_hotlimit.c');

my $mpm = hl_mpm();
sub rule { return { max => $_[0], window => $_[1] // 60 } }

my $ts = table_server(name => 'redir-origin', body => { routes => { '/r' => rule(1) } });
my $other = table_server(name => 'redir-other', body => { routes => { '/evil' => rule(1) } });
$ts->set_redirect($ts->url('/real.json'));
my $h = start_httpd(name => 'url-redirect', conf => <<"CONF");
HotLimitQuotaTable ${\ $ts->url}
HotLimitReloadInterval 1
HotLimitFetchTimeout 1
HotLimitTableFailure open
CONF

# 1. A same-origin redirect (absolute Location) is followed.
ok t_cmp($h->wait_generation(0, 3) > 0 ? 1 : 0, 1, "[$mpm] table fetched through a same-origin 302");
ok t_cmp($h->codes('/r', 2), '200 429', "[$mpm] /r limited by the redirected-to document");
my @req = $ts->requests;
ok t_cmp((grep { $_->{status} eq '302' && $_->{line} =~ m{^GET /table\.json } } @req) ? 1 : 0, 1,
         "[$mpm] the configured URL answered 302");
ok t_cmp((grep { $_->{status} eq '200' && $_->{line} =~ m{^GET /real\.json } } @req) ? 1 : 0, 1,
         "[$mpm] ... and its target, on the same origin, 200");
ok t_cmp(wait_until(sub { grep { $_->{status} eq '304' && $_->{line} =~ m{/real\.json} } $ts->requests }, 4)
         ? 1 : 0, 1, "[$mpm] later fetches are conditional through the redirect (304)");

# 2. A relative Location is the same origin too.
$h->change_applies(sub {
    $ts->set_body({ routes => { '/r' => rule(1), '/r2' => rule(1) } });
    $ts->set_redirect('/real.json');
}, 'relative same-origin redirect followed');
ok t_cmp($h->codes('/r2', 2), '200 429', "[$mpm] /r2 from the new document applies");

# 3. Another origin (another port on 127.0.0.1): refused, never contacted.
my $off = $h->log_offset;
$ts->set_redirect($other->url);
my $line = $h->wait_log(qr/HL00501/, $off, 4);
ok t_cmp($line, qr/HL00501: quota table \Q${\ $ts->url}\E: redirect to '\Q${\ $other->url}\E' refused: another origin than http:\/\/127\.0\.0\.1:\d+/,
         "[$mpm] cross-origin redirect refused (HL00501)");
ok t_cmp($h->wait_log(qr/HL00404/, $off, 2),
         qr/HL00404: .* failed: redirect to '\S+' refused: another origin .*; its rules are dropped \(HotLimitTableFailure open\)/,
         "[$mpm] ... a table failure handled by HotLimitTableFailure (HL00404)");
my $nfail = () = grep { /HL00501/ } $h->log_lines($off);
wait_until(sub { (() = grep { /HL00501/ } $h->log_lines($off)) >= $nfail + 2 }, 4);
my @leaked = $other->requests;
ok t_cmp(scalar(@leaked), 0, "[$mpm] the other origin received no request (no If-None-Match leak)");
ok t_cmp($h->codes('/r', 1), '200', "[$mpm] open: the table's rules are dropped");
my $st = $h->status;
ok t_cmp($st->{table}{message}, qr/^redirect to '\S+' refused: another origin/,
         "[$mpm] status: the message says why");

# 4. The same host and port under another scheme is another origin too.
$off = $h->log_offset;
my $nreq = () = $ts->requests;
my $https = 'https://127.0.0.1:' . $ts->port . '/real.json';
$ts->set_redirect($https);
ok t_cmp($h->wait_log(qr/HL00501/, $off, 4), qr/redirect to '\Q$https\E' refused: another origin/,
         "[$mpm] a redirect to https on the same host and port is refused");
wait_until(sub { (() = grep { /HL00501/ } $h->log_lines($off)) >= 2 }, 4);
my @else = grep { $_->{line} !~ m{^GET /table\.json } } $ts->requests($nreq);
ok t_cmp(scalar(@else), 0,
         "[$mpm] ... without a request to it");

# 5. Back to a same-origin redirect: the table returns.
$h->change_applies(sub { $ts->set_redirect($ts->url('/real.json')) },
                   'same-origin redirect again: table back');
ok t_cmp($h->codes('/r', 1), '429', "[$mpm] /r limited again (its counter kept)");
@leaked = $other->requests;
ok t_cmp(scalar(@leaked), 0, "[$mpm] the other origin still received nothing");
$h->stop;
$ts->stop;
$other->stop;
