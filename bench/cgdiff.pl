#!/usr/bin/perl
# bench/cgdiff.pl N1 N2 A_N1 A_N2 B_N1 B_N2 [TOP] [OBJ]
# Per-request costs by function from four callgrind files (plain httpd A and
# httpd + module B, each after N1 and after N2 requests): cost/request =
# (cost(N2) - cost(N1)) / (N2 - N1), so start-up and shutdown cancel out.
# Prints
#   1. the module's hooks, inclusive Ir per request;
#   2. the TOP functions of OBJ (default mod_hotlimit.so), self Ir per request;
#   3. the TOP functions of any object whose self Ir per request grows most
#      from A to B (what the module makes httpd, APR and libc do).
# Function names are taken without their file: callgrind_annotate splits one
# function into several "file:function" entries (inlined code, lines without
# debug info); self costs are summed over them, inclusive costs take the
# largest entry.
use strict;
use warnings;

my ($n1, $n2, $a1, $a2, $b1, $b2, $top, $obj) = @ARGV;
die "usage: $0 N1 N2 A_N1 A_N2 B_N1 B_N2 [TOP] [OBJ]\n" unless defined $b2;
$top //= 12;
$obj //= 'mod_hotlimit.so';
my $d = $n2 - $n1;

# Returns ({name => cost}, {name => 1 if seen in $obj}).
sub costs {
    my ($file, $inclusive) = @_;
    my (%c, %mine);
    open(my $fh, '-|', 'callgrind_annotate', "--inclusive=$inclusive",
         '--threshold=100', '--show-percs=no', '--auto=no', $file)
        or die "callgrind_annotate: $!\n";
    while (<$fh>) {
        next unless /^\s*([\d,]+)\s+(\S.*?)\s*$/;
        my ($ir, $rest) = ($1, $2);
        next if $rest eq 'PROGRAM TOTALS';
        $ir =~ tr/,//d;
        my $o = $rest =~ s/\s+\[(.*)\]$// ? $1 : '';
        (my $name = $rest) =~ s/^.*://;     # drop "file:" (file names have no ':')
        $name =~ s/'\d+$//;                 # recursion depth suffix
        if ($inclusive eq 'yes') { $c{$name} = $ir if !defined $c{$name} || $ir > $c{$name} }
        else { $c{$name} += $ir }
        $mine{$name} = 1 if index($o, $obj) >= 0;
    }
    close $fh;
    return (\%c, \%mine);
}

sub per_request {
    my ($x1, $x2) = @_;
    my %r;
    for my $k (keys %$x1, keys %$x2) { $r{$k} = (($x2->{$k} // 0) - ($x1->{$k} // 0)) / $d }
    return \%r;
}

my ($bi1, $mine1) = costs($b1, 'yes');
my ($bi2, $mine2) = costs($b2, 'yes');
my $binc = per_request($bi1, $bi2);
my %mine = (%$mine1, %$mine2);

print "  module hooks, inclusive Ir per request (B):\n";
for my $h (qw(hl_access_checker hl_fixups hl_log_transaction hl_status_handler)) {
    printf "  %10.0f  %s\n", $binc->{$h} // 0, $h if exists $binc->{$h};
}

my ($bs1) = costs($b1, 'no');
my ($bs2) = costs($b2, 'no');
my $bself = per_request($bs1, $bs2);
print "  top $obj functions, self Ir per request (B):\n";
my @m = sort { $bself->{$b} <=> $bself->{$a} } grep { $mine{$_} } keys %$bself;
printf "  %10.1f  %s\n", $bself->{$_}, $_ for grep { $bself->{$_} >= 0.5 } @m[0 .. ($#m < $top - 1 ? $#m : $top - 1)];

my ($as1) = costs($a1, 'no');
my ($as2) = costs($a2, 'no');
my $aself = per_request($as1, $as2);
my %delta;
for my $k (keys %$aself, keys %$bself) { $delta{$k} = ($bself->{$k} // 0) - ($aself->{$k} // 0) }
print "  largest self-Ir growth per request from A to B, any object (B-A, A, B):\n";
my @g = sort { $delta{$b} <=> $delta{$a} } keys %delta;
for my $k (@g[0 .. ($#g < $top - 1 ? $#g : $top - 1)]) {
    printf "  %10.1f  %10.1f  %10.1f  %s%s\n", $delta{$k}, $aself->{$k} // 0, $bself->{$k} // 0,
           $k, $mine{$k} ? " [module]" : "";
}
