#!/usr/bin/perl
# bench/sse-upstream.pl PORT EVENTS INTERVAL_MS
# bench/sse-upstream.pl --print EVENTS
# A slow OpenAI-compatible upstream for bench/sse-usage, on 127.0.0.1:PORT.
# Answers every request, one connection at a time, with a chunked
# text/event-stream of EVENTS chat.completion.chunk events, then a usage
# event, then "data: [DONE]": EVENTS + 2 events, written one per chunk,
# event i (from 0) at INTERVAL_MS * i after the request arrived (on a fixed
# schedule: a late write does not delay the next ones), each written to the
# socket at once (no buffering here), each with an SSE "id:" line that
# holds the time it was written (microseconds since the epoch), so the
# client can tell how long the event took to arrive. Then closes the
# connection. Prints
# "ready" once it listens; runs until killed. With --print, writes the same
# EVENTS + 2 events to stdout (the static file of bench/sse-usage) and exits.
# The chunks are shaped as OpenAI's with stream_options.include_usage (every
# chunk carries "usage":null, the last one the usage and empty choices).
use strict;
use warnings;
use IO::Socket::INET;
use Time::HiRes qw(sleep time);

my ($port, $events, $interval) = @ARGV;
die "usage: $0 PORT EVENTS INTERVAL_MS | --print EVENTS\n"
    unless defined $events && ($port eq '--print' || defined $interval);
my $id = '"id":"chatcmpl-bench","object":"chat.completion.chunk"';
my @ev = map { qq(data: {$id,"choices":[{"index":0,"delta":{"content":" w$_"}}],"usage":null}\n\n) } 1 .. $events;
push @ev, qq(data: {$id,"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":$events,"total_tokens":@{[12 + $events]}}}\n\n),
          "data: [DONE]\n\n";

if ($port eq '--print') { print @ev; exit 0 }

my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port,
                              Proto => 'tcp', Listen => 16, ReuseAddr => 1)
    or die "listen 127.0.0.1:$port: $!\n";
$| = 1;
print "ready\n";

while (my $c = $l->accept) {
    binmode $c;
    my $head = '';
    while (index($head, "\r\n\r\n") < 0) {
        my $r = sysread($c, $head, 8192, length $head);
        last unless $r;
    }
    next unless index($head, "\r\n\r\n") >= 0;
    syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
               . "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
               . "Connection: close\r\n\r\n");
    my $t0 = time;
    for my $i (0 .. $#ev) {
        my $wait = $t0 + $i * $interval / 1000 - time;
        sleep($wait) if $wait > 0;
        my $e = sprintf("id: %.0f\n%s", time * 1e6, $ev[$i]);
        last unless syswrite($c, sprintf("%x\r\n%s\r\n", length $e, $e));
    }
    syswrite($c, "0\r\n\r\n");
    close $c;
}
