#!/usr/bin/env python3
"""php_json_diff.py - differential check of the module's json:PATH value
and key against PHP: random and adversarial bodies (duplicate and escaped
keys, string escapes, \\u surrogates, invalid UTF-8, control bytes, deep
nesting, numbers in every form, a byte order mark, all sorts of white
space, trailing bytes) are decoded by php's json_decode($body, true) and
by php_json_cli (hl_json_path + hl_json_num, as read_json in
src/httpd/mod_hotlimit_body.c). Compared for each body:
  - the value: PHP's string, or (string) of its int or float, or absent
    (null, bool, array, invalid document) against the module's;
  - the folded key under every norm= (hl_keyform_fold of the module's
    value against hl_keyform_fold of PHP's value).

    python3 t/support/php_json_diff.py [SEED [COUNT]]

Prints every difference and "N cases, D differences"; exits 1 if any.
Needs php-cli and cc. One php and two cli processes in all: a few
thousand bodies take a second or two.
"""
import os, random, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, '..', '..', 'src', 'core')
CORE = ['hl_json_path.c', 'hl_json_num.c', 'hl_keyform.c', 'hl_phone.c', 'hl_text.c']

# Reads records "PATH\nLEN\nBODY" from stdin; prints "S:HEX" or "ABSENT".
PHP = r'''<?php
$in = fopen('php://stdin', 'rb');
while (($path = fgets($in)) !== false) {
    $path = rtrim($path, "\n");
    $len = (int) fgets($in);
    $body = $len > 0 ? fread($in, $len) : '';
    while (strlen($body) < $len) $body .= fread($in, $len - strlen($body));
    $v = json_decode($body, true);
    foreach (explode('.', $path) as $seg) {
        if (!is_array($v) || !array_key_exists($seg, $v)) { $v = null; break; }
        $v = $v[$seg];
    }
    if (is_string($v) || is_int($v) || is_float($v))
        echo 'S:', bin2hex((string) $v), "\n";
    else
        echo "ABSENT\n";
}
'''

PATHS = ['phone', 'user.email', 'a.b.c']
KEYS = {'phone': ['phone', 'ph\\u006fne', '\\u0070hone', 'phon\\u0065', 'Phone', 'phone ',
                  'phone\\u0000', 'ph\\u006Fne', 'pho\\/ne', 'phon'],
        'user': ['user', 'us\\u0065r', 'User'],
        'email': ['email', 'em\\u0061il', 'e\\u006dail'],
        'a': ['a', '\\u0061'], 'b': ['b', '\\u0062'], 'c': ['c', '\\u0063']}
NUMS = ['0', '-0', '1', '-1', '33612345678', '9223372036854775807', '9223372036854775808',
        '-9223372036854775808', '-9223372036854775809', '12345678901234567890', '1e3', '1E3',
        '1e+3', '4e-3', '1.0', '-0.0', '0.10', '1e14', '1e15', '1e-5', '1e999', '-1e999',
        '1e-999', '3.3612345678e10', '0.30000000000000004', '123456789012345.0',
        '12345678901234.5', '1.7976931348623157e308', '4.9e-324', '01', '1.', '.5', '+1',
        '1e', '1e+', '-', '--1', '0x10', 'NaN', 'Infinity', '1_000', '1.5E+2', '0e0']
STRS = ['"+33 6 12 34 56 78"', '"0612345678"', '"\\uff0b\\uff13\\uff13"', '"\\u0663\\u0663"',
        '"A.Lice+x@GoogleMail.com."', '"\\"q\\"@x"', '"\\u0000"', '"\\n\\t\\/\\\\"',
        '"\\ud83d\\ude00"', '"\\ud83d"', '"\\ude00"', '"\\ud83d\\u0041"', '"\\uD83D\\uDE00"',
        '"\\u12"', '"\\x41"', '"\\a"', '"\\u00e9"', '""', '" "', '"\u00e9"', '"\uff13"',
        '"1e3"', '"1000"', '"-0"', '"0"']
RAW = [b'"\xc3\xa9"', b'"\xc3"', b'"\xe0\x80\x80"', b'"\xed\xa0\x80"', b'"\xf4\x90\x80\x80"',
       b'"\xc0\xaf"', b'"\xff"', b'"\x01"', b'"\x1f"', b'"\x7f"', b'"\t"', b'"\xef\xbb\xbf"',
       b'"\xf0\x9f\x98\x80"', b'"\xe2\x80\xa8"']
WS = [b'', b' ', b'\n', b'\r\n', b'\t', b'\x0c', b'\x0b', b'\xc2\xa0', b'  \n ']
OTHER = [b'true', b'false', b'null', b'[]', b'{}', b'[1]', b'{"phone":"x"}', b'tru', b'nul',
         b'True', b'NULL']


def ws():
    return random.choice(WS) if random.random() < 0.15 else random.choice([b'', b' '])


def scalar():
    r = random.random()
    if r < 0.35:
        return random.choice(NUMS).encode()
    if r < 0.45:
        ip = random.choice(['', '-']) + str(random.randint(0, 10 ** random.randint(1, 25)))
        fp = random.choice(['', '.' + str(random.randint(0, 10 ** random.randint(1, 20)))])
        ex = random.choice(['', 'e' + random.choice(['', '+', '-']) + str(random.randint(0, 400))])
        return (ip + fp + ex).encode()
    if r < 0.8:
        return random.choice(STRS).encode()
    if r < 0.9:
        return random.choice(RAW)
    return random.choice(OTHER)


def key(name):
    return b'"' + random.choice(KEYS.get(name, [name])).encode() + b'"'


def obj(segs, depth=0):
    """An object holding segs (a path) somewhere, with noise around."""
    members = []
    for _ in range(random.randint(0, 3)):
        noise = random.choice(['x', 'y', 'phone2', 'user', 'a'])
        members.append(b'"' + noise.encode() + b'":' + ws()
                       + (scalar() if random.random() < 0.3 else b'"n"'))
    if segs:
        for _ in range(random.choice([1, 1, 1, 2, 3])):       # duplicates
            if len(segs) > 1 and random.random() < 0.85:
                v = obj(segs[1:], depth + 1)
            elif len(segs) > 1:
                v = scalar()
            else:
                v = scalar() if random.random() < 0.9 else obj(['z'], depth + 1)
            members.insert(random.randint(0, len(members)), ws() + key(segs[0]) + ws() + b':' + ws() + v + ws())
    random.shuffle(members) if random.random() < 0.2 else None
    sep = b',' if random.random() < 0.97 else random.choice([b',,', b';', b' '])
    body = b'{' + sep.join(members) + (b',' if random.random() < 0.02 else b'') + b'}'
    return body


def nested(segs):
    """A path's value under deep nesting, near PHP's depth limit (512)."""
    d = random.choice([100, 509, 510, 511, 512, 513])
    inner = b'[' * d + b']' * d
    return b'{"' + segs[0].encode() + b'":"v","deep":' + inner + b'}'


def body_for(path):
    segs = path.split('.')
    r = random.random()
    if r < 0.05:
        b = nested(segs)
    elif r < 0.08:
        b = random.choice([b'', b' ', b'[', b'{', b'"phone"', b'[{"phone":"1"}]', b'5', b'null'])
    else:
        b = obj(segs)
    if random.random() < 0.05:
        b = b'\xef\xbb\xbf' + b                 # a byte order mark
    if random.random() < 0.1:
        b = ws() + b + ws()
    if random.random() < 0.03:
        b = b + random.choice([b'x', b'{}', b'\x00', b',', b' 1'])
    if random.random() < 0.03 and len(b) > 2:
        b = b[:random.randint(1, len(b) - 1)]   # cut short
    return b


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    random.seed(seed)
    tmp = tempfile.mkdtemp(prefix='php-json-diff.')
    try:
        cli = os.path.join(tmp, 'cli')
        subprocess.run(['cc', '-O1', '-I' + SRC, os.path.join(HERE, 'php_json_cli.c')]
                       + [os.path.join(SRC, f) for f in CORE] + ['-o', cli], check=True)
        page = os.path.join(tmp, 'p.php')
        with open(page, 'w') as f:
            f.write(PHP)
        cases = []
        for _ in range(count):
            path = random.choice(PATHS)
            cases.append((path, body_for(path)))
        feed = b''.join(p.encode() + b'\n' + str(len(b)).encode() + b'\n' + b for p, b in cases)
        php = subprocess.run(['php', '-n', page], input=feed, capture_output=True, check=True)
        hl = subprocess.run([cli, 'body'], input=feed, capture_output=True, check=True)
        want = php.stdout.decode().splitlines()
        got = hl.stdout.decode().splitlines()
        if len(want) != count or len(got) != count:
            print('php gave %d answers, the cli %d, for %d cases' % (len(want), len(got), count))
            return 1
        # PHP's values folded by the module's norms.
        vals = [bytes.fromhex(w[2:]) if w.startswith('S:') else None for w in want]
        vfeed = b''.join(str(len(v)).encode() + b'\n' + v for v in vals if v is not None)
        folded = iter(subprocess.run([cli, 'value'], input=vfeed, capture_output=True,
                                     check=True).stdout.decode().splitlines())
        bad = 0
        for (path, body), w, g, v in zip(cases, want, got, vals):
            expect = w if v is None else w + next(folded)
            if expect != g:
                bad += 1
                if bad <= 20:
                    print('path=%s body=%r: php %s, module %s' % (path, body[:200], expect, g))
        print('%d cases, %d differences' % (count, bad))
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
