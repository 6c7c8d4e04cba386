#!/usr/bin/env python3
"""php_reserve_diff.py - differential check of reserve=max_tokens
(hl_reserve.c) against PHP's json_decode: random and adversarial JSON
bodies are read by php-cli (json_decode($body, true), then each top-level
max_tokens, max_completion_tokens and max_output_tokens that is a number
or a numeric string, rounded up) and by reserve_cli (the module's reader,
DEFAULT 1024). The module must reserve at least what PHP sees:

  - the largest positive value among those fields, when there is one;
  - DEFAULT (1024) when json_decode fails or no field is positive.

    python3 t/support/php_reserve_diff.py [SEED [COUNT]]

Prints every difference; exits 1 if any.
"""
import os, random, subprocess, sys, tempfile, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, '..', '..', 'src', 'core')
DEFAULT = 1024
CAP = 2147483647
PHP = r'''<?php
function val($v) {
    if (is_string($v) && is_numeric($v)) $v = (float)$v;
    if (is_int($v) || is_float($v)) {
        if (is_nan($v)) return null;
        if ($v >= 2147483647) return 2147483647;
        return $v > 0 ? (int)ceil($v) : 0;
    }
    return null;
}
$in = fopen($argv[1], 'r');
while (($line = fgets($in)) !== false) {
    $a = json_decode(hex2bin(rtrim($line, "\n")), true);
    $best = 0;
    if (is_array($a))
        foreach (['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as $k)
            if (array_key_exists($k, $a) && ($v = val($a[$k])) !== null && $v > $best)
                $best = $v;
    echo $best > 0 ? $best : ''' + str(DEFAULT) + r''', "\n";
}
'''

NAMES = ['max_tokens', 'max_completion_tokens', 'max_output_tokens']
OTHER = ['model', 'messages', 'MAX_TOKENS', 'max_tokens ', 'max_token', 'max_tokens\\u0000',
         'max_tokensx', '', 'stream', 'max', 'tokens']


def esc_key(k):
    """k with some characters written as \\u escapes (upper or lower hex)."""
    out = ''
    for ch in k:
        if random.random() < 0.15:
            h = '%04x' % ord(ch)
            out += '\\u' + (h.upper() if random.random() < 0.5 else h)
        else:
            out += ch
    return out


def number():
    n = random.choice([1, 5, 100, 999, 1023, 1024, 1025, 4000, 65536, 2 ** 31 - 1,
                       2 ** 31, 2 ** 32 + 1, 2 ** 64 + 1, 10 ** 30,
                       random.randint(1, 100000)])
    form = random.randint(0, 9)
    if form == 0:
        return '%de0' % n
    if form == 1:
        return '%d.0' % n
    if form == 2:
        s = str(n)
        return '%s.%sE+%d' % (s[0], s[1:] or '0', len(s) - 1)
    if form == 3:
        return '%de-2' % (n * 100)
    if form == 4:
        return '%d.%d' % (n, random.randint(0, 99))
    if form == 5:
        return '-%d' % n
    if form == 6:
        return random.choice(['0', '-0', '0.0', '1e400', '-1e400', '1e-400', '0.5',
                              '1E2', '1e+2', '4e3', '123456789012345678901234567890'])
    return str(n)


def string_number():
    s = random.choice([number(), str(random.randint(1, 9000))])
    s = random.choice(['%s', ' %s', '%s ', '\\t%s\\n', '+%s', '%s_', '0x%s', '%sx',
                       '%s', '%s', '\\u0020%s', '\\f%s'])  % s
    if random.random() < 0.1:
        s = ''.join('\\u%04x' % ord(c) if random.random() < 0.5 else c for c in s)
    if random.random() < 0.1:
        s = ''.join(chr(0xFF10 + int(c)) if c.isdigit() else c for c in s)
    if random.random() < 0.05:
        s = s.replace('00', '0_0')
    return '"' + s + '"'


def value(depth=0):
    r = random.random()
    if r < 0.45:
        return number()
    if r < 0.65:
        return string_number()
    if r < 0.75:
        return random.choice(['null', 'true', 'false', 'nul', 'Infinity', 'NaN', '"x"',
                              '"\\ud800"', '"\\q"', '"a\x01"', '"\xc3\x28"'])
    if r < 0.9 and depth < 2:
        inner = ','.join('"%s":%s' % (esc_key(random.choice(NAMES + OTHER)), value(depth + 1))
                         for _ in range(random.randint(0, 3)))
        return random.choice(['{%s}', '[%s]']) % (inner if '{' else '')
    return random.choice(['"\\"max_tokens\\":9000"', '[1,{"max_tokens":9000}]',
                          '{"max_tokens":9000}', '"}"', '"]"', '[[[]]]', '"\\\\"'])


def body():
    members = []
    for _ in range(random.randint(0, 6)):
        k = random.choice(NAMES * 2 + OTHER)
        members.append('"%s"%s:%s' % (esc_key(k), random.choice(['', ' ', '\n']), value()))
    b = random.choice(['{%s}', ' {%s} ', '{%s}\n', '{ %s }']) % random.choice([',', ', ']).join(members)
    r = random.random()
    if r < 0.04:
        b = b[:random.randint(0, len(b))]                 # cut off
    elif r < 0.06:
        b = '\ufeff' + b                                  # BOM
    elif r < 0.08:
        b = b + random.choice(['x', ',', '}', '{}'])      # trailing bytes
    elif r < 0.10:
        b = b.replace('}', ',}', 1)                       # trailing comma
    elif r < 0.12:
        b = '[' + b + ']'
    elif r < 0.13:
        b = '[' * 600 + ']' * 600
    elif r < 0.14:
        b = '{"a":' + '[' * 520 + ']' * 520 + ',"max_tokens":5}'
    return b


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    random.seed(seed)
    tmp = tempfile.mkdtemp(prefix='php-reserve-diff.')
    try:
        cli = os.path.join(tmp, 'cli')
        subprocess.run(['cc', '-O1', '-I' + SRC, os.path.join(HERE, 'reserve_cli.c')]
                       + [os.path.join(SRC, f) for f in ('hl_reserve.c', 'hl_json_path.c', 'hl_text.c')]
                       + ['-o', cli], check=True)
        bodies = [body().encode('utf-8', 'surrogatepass') for _ in range(count)]
        fixed = [b'{"max_tokens":1,"max_tokens":4000}', b'{"max\\u005ftokens":4000}',
                 b'{"max_tokens":4e3}', b'{"max_tokens":"4000"}', b'{"max_tokens":4.0E+3}',
                 b'{"max_tokens":1,"max_completion_tokens":4000}', b'{"max_tokens":4000.0}']
        bodies = fixed + bodies
        lines = ''.join(b.hex() + '\n' for b in bodies)
        path = os.path.join(tmp, 'bodies')
        with open(path, 'w') as f:
            f.write(lines)
        with open(os.path.join(tmp, 'p.php'), 'w') as f:
            f.write(PHP)
        want = subprocess.run(['php', os.path.join(tmp, 'p.php'), path], capture_output=True,
                              check=True).stdout.decode().split()
        got = subprocess.run([cli], input=lines.encode(), capture_output=True,
                             check=True).stdout.decode().split()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if len(want) != len(bodies) or len(got) != len(bodies):
        print('php gave %d answers, the module %d, for %d bodies' % (len(want), len(got), len(bodies)))
        return 1
    bad = more = 0
    for b, w, g in zip(bodies, want, got):
        if int(g) < int(w):
            bad += 1
            print('body %r: php %s, module %s' % (b[:300], w, g))
        elif int(g) > int(w):
            more += 1
    print('%d bodies, %d differences (module below PHP), %d reserved more than PHP reads'
          % (len(bodies), bad, more))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
