#!/usr/bin/env python3
"""check_metrics.py METRICS_FILE FILE... - checks that the metrics the
monitoring examples name are ones mod_hotlimit exports.

METRICS_FILE is a ?metrics response. It is parsed with the Prometheus
client's own text parser (prometheus_client.parser), so a line it would
reject fails the check too. Every name matching hotlimit_[a-z_]+ in the
other FILEs (Prometheus config, alert rules, Grafana dashboard) must be the
name of a sample in it: for a counter that is the family name plus _total
(the parser strips _total from a counter family's name). A name passed to
rate(), irate() or increase() must be a counter's.

Prints a "not ok: ..." line per problem and a summary line; exits 0
when all is well, 1 on a problem, 2 on bad usage or a parse error.
"""
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

NAME = re.compile(r"hotlimit_[a-z_]+")
COUNTER_FN = re.compile(r"\b(?:rate|irate|increase)\s*\(\s*(hotlimit_[a-z_]+)")


def exported(path):
    """Returns {sample name: family type} of the exposition in path;
    raises ValueError on a parse error."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    names = {}
    for family in text_string_to_metric_families(text):
        # A family without samples (no route counted yet) still names its
        # samples: a counter's is the family name + _total.
        own = family.name + "_total" if family.type == "counter" else family.name
        names.setdefault(own, family.type)
        for sample in family.samples:
            names.setdefault(sample.name, family.type)
    return names


def main(argv):
    if len(argv) < 3:
        print("usage: check_metrics.py METRICS_FILE FILE...", file=sys.stderr)
        return 2
    try:
        names = exported(argv[1])
    except ValueError as e:
        print(f"not ok: {argv[1]} does not parse as Prometheus text: {e}")
        return 2
    if not names:
        print(f"not ok: no metric in {argv[1]}")
        return 1
    bad = 0
    seen = set()
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name in sorted(set(NAME.findall(text))):
            seen.add(name)
            if name not in names:
                print(f"not ok: {path} names {name}, which ?metrics does not export")
                bad += 1
        for name in sorted(set(COUNTER_FN.findall(text))):
            if name in names and names[name] != "counter":
                print(f"not ok: {path} takes rate/increase of {name}, a {names[name]}")
                bad += 1
    print(f"{'not ok' if bad else 'ok'}: {len(seen)} metric names in "
          f"{len(argv) - 2} files, {len(names)} exported, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
