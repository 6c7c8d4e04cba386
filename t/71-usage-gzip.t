# cost=usage reads gzip and deflate answers (spec 2.1 "cost="; issue 25
# item 1): every SDK and curl send Accept-Encoding: gzip, and a backend
# that compresses used to be charged only its reservation whatever it
# spent. On a private httpd, /api/ is proxied (mod_proxy_http) to /be/ on
# the same server: a CGI LLM stand-in answering JSON or an event stream
# with a usage of ?tokens=, compressed by mod_deflate (SetOutputFilter
# DEFLATE, by Accept-Encoding), or by the CGI itself (zlib-wrapped or raw
# deflate, br, a broken gzip). The CGI echoes the Accept-Encoding it got
# in X-Seen-AE.
#
# /api/ has `HotLimitQuota 10000/1m cost=usage reserve=max_tokens:500`: a
# GET reserves 500. After an answer of 300 the next request is admitted
# with 10000 - 300 - 500 = 9200 left; an answer whose usage cannot be read
# is charged its reservation (9000 left). On main (0f9f2b3) every gzip or
# deflate answer was charged 500, the last usage of a stream (an echoed
# fake) was charged, and the backend got the client's br and zstd.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/lib";
use Apache::Test;
use Apache::TestUtil;
use IO::Uncompress::Gunzip qw(gunzip);
use Time::HiRes qw(sleep);
use HotLimitTable;

plan tests => 14;
my $mpm = hl_mpm();

my $cgi = <<'CGI';
#!/usr/bin/perl
# An LLM stand-in: ?tokens=N (300) reported as usage; ?shape=sse an event
# stream whose real usage is followed by an echoed user text holding a
# fake one; ?enc=zlib|raw|br|broken compresses itself; ?usage=0 reports
# none. X-Seen-AE: the Accept-Encoding received.
use strict;
use IO::Compress::Gzip qw(gzip);
use IO::Compress::Deflate qw(deflate);
use IO::Compress::RawDeflate qw(rawdeflate);
my %q = map { split /=/, $_, 2 } split /&/, ($ENV{QUERY_STRING} // '');
my $n = $q{tokens} // 300;
my $usage = ($q{usage} // 1) ? qq|,"usage":{"prompt_tokens":100,"completion_tokens":|
    . ($n - 100) . qq|,"total_tokens":$n}| : '';
my ($type, $body);
if (($q{shape} // '') eq 'sse') {
    $type = 'text/event-stream';
    $body = qq{data: {"choices":[{"delta":{"content":"Hi"}}],"usage":null}\n\n}
          . qq{data: {"choices":[]$usage}\n\n}
          . qq{data: {"usage":{"total_tokens":1}}\n\n}     # the echoed text
          . "data: [DONE]\n\n";
} else {
    $type = 'application/json';
    $body = qq({"id":"chatcmpl-1","choices":[{"message":{"content":"Hi"}}]$usage});
}
my $enc = $q{enc} // '';
my $out = $body;
if ($enc eq 'zlib')   { deflate \$body => \$out }
if ($enc eq 'raw')    { rawdeflate \$body => \$out }
if ($enc eq 'br')     { $out = "\x0b\x02\x80" . $body }
if ($enc eq 'broken') { gzip \$body => \$out; substr($out, 12, 8) = "\xff" x 8 }
print "Content-Type: $type\r\n";
print "X-Seen-AE: ", ($ENV{HTTP_ACCEPT_ENCODING} // '(none)'), "\r\n";
print "Content-Encoding: ", ($enc eq 'zlib' || $enc eq 'raw' ? 'deflate'
                             : $enc eq 'broken' ? 'gzip' : $enc), "\r\n" if $enc;
print "\r\n", $out;
CGI

my $h = start_httpd(name => 'usage-gzip', start => 0,
                    files => { 'be/llm.cgi' => $cgi },
                    setup => sub { chmod 0755, $_[0]->dir . '/htdocs/be/llm.cgi' },
                    conf => hl_cgi_conf() . hl_load_conf(qw(proxy proxy_http deflate))
                            . <<"CONF");
LogLevel info hotlimit:debug
<Directory "\@DIR\@/htdocs/be">
    Options +ExecCGI
    AddHandler cgi-script .cgi
    SetOutputFilter DEFLATE
</Directory>
HotLimitHeaders On
<Location /api/>
    ProxyPass http://127.0.0.1:\@PORT\@/be/
    HotLimitQuota 10000/1m by=header:Authorization cost=usage reserve=max_tokens:500
</Location>
CONF
$h->{conf} =~ s/\@PORT\@/$h->port/ge;
$h->_write_conf;
$h->start;

# GETs /api/llm.cgi?$query with key $key and Accept-Encoding $ae (undef:
# none); waits for the charge (log_transaction). Returns the response.
sub call {
    my ($query, $key, $ae) = @_;
    my $res = $h->get("/api/llm.cgi?$query", Authorization => "Bearer $key",
                      defined $ae ? ('Accept-Encoding' => $ae) : ());
    sleep 0.3;
    return $res;
}

# Returns what is left (RateLimit r=) when the next request of $key is
# admitted: 10000 - what the earlier answer was charged - 500.
sub left_after {
    my ($key) = @_;
    my ($r) = (call('tokens=100', $key)->header('RateLimit') // '') =~ /;r=(\d+)/;
    return $r // -1;
}

# --- gzip by mod_deflate ----------------------------------------------------------
my $res = call('tokens=300', 'k-gzip', 'gzip, br');
my $raw = $res->content;
my $plain;
gunzip(\$raw => \$plain);
ok t_cmp(($res->header('Content-Encoding') // '') . ' ' . ($plain // ''),
         qr/^gzip \{"id":"chatcmpl-1".*"total_tokens":300\}\}$/,
         "[$mpm] the client gets mod_deflate's gzip answer unchanged");
ok t_cmp(left_after('k-gzip'), 9200, "[$mpm] a gzip JSON answer is charged its usage (300)");
ok t_cmp($res->header('X-Seen-AE'), 'gzip',
         "[$mpm] the backend saw Accept-Encoding narrowed to gzip (br dropped)");

call('tokens=300&shape=sse', 'k-gzip-sse', 'gzip');
ok t_cmp(left_after('k-gzip-sse'), 9200,
         "[$mpm] a gzip event stream with an echoed fake usage after the real one: the largest (300)");

# --- several usages, identity -------------------------------------------------------
call('tokens=300&shape=sse', 'k-sse', undef);
ok t_cmp(left_after('k-sse'), 9200,
         "[$mpm] an event stream whose last usage is an echoed 1: the largest (300) is charged");

# --- deflate, by the backend itself -------------------------------------------------
$res = call('tokens=300&enc=zlib', 'k-zlib', 'deflate');
ok t_cmp($res->header('Content-Encoding'), 'deflate', "[$mpm] a zlib-wrapped deflate answer");
ok t_cmp(left_after('k-zlib'), 9200, "[$mpm] ... charged its usage (300)");
call('tokens=300&enc=raw', 'k-raw', 'deflate');
ok t_cmp(left_after('k-raw'), 9200, "[$mpm] a raw deflate answer: charged its usage (300)");

# --- unreadable: the whole reservation --------------------------------------------
call('tokens=300&enc=br', 'k-br', 'br, gzip');
ok t_cmp(left_after('k-br'), 9000, "[$mpm] a br answer (unreadable): charged its reservation (500)");
call('tokens=300&enc=broken', 'k-broken', 'gzip');
ok t_cmp(left_after('k-broken'), 9000, "[$mpm] a broken gzip stream: charged its reservation (500)");
call('tokens=300&usage=0', 'k-none', 'gzip');
ok t_cmp(left_after('k-none'), 9000, "[$mpm] a gzip answer with no usage: charged its reservation (500)");

# --- Accept-Encoding narrowed, q-values kept -------------------------------------
$res = call('tokens=300', 'k-ae', 'br;q=1.0, zstd, gzip;q=0.8, deflate, *;q=0.1');
ok t_cmp($res->header('X-Seen-AE'), 'gzip;q=0.8, deflate',
         "[$mpm] the backend sees only gzip and deflate, q-values kept");
$res = call('tokens=300', 'k-ae-br', 'br, zstd');
ok t_cmp($res->header('X-Seen-AE'), 'identity', "[$mpm] br and zstd alone: identity");
ok t_cmp(HotLimitTable::_slurp($h->error_log) // '', qr/HL02001: cost=usage: Accept-Encoding 'br, zstd' narrowed to 'identity'/,
         "[$mpm] the narrowing is logged at debug (HL02001)");

$h->stop;
