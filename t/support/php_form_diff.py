#!/usr/bin/env python3
"""php_form_diff.py - differential check of hl_php_request_param against
real PHP: random query strings and urlencoded or multipart POST bodies are
sent to `php -S` (a page printing $_REQUEST[NAME], or the first key of the
array it is) and given to php_form_cli; every difference is printed.
Not part of `make check` (it needs php-cli and curl):

    python3 t/support/php_form_diff.py [SEED [COUNT]]

Exits 1 if any answer differs. An empty array ("A:(empty)" from PHP) is
compared as ABSENT: the module falls back to the path or the address.
"""
import os, random, shutil, socket, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, '..', '..', 'src', 'core')
PAGE = r'''<?php
$n = $_GET['__n'] ?? 'do';
$v = $_REQUEST[$n] ?? null;
if (is_array($v)) { $k = array_keys($v); echo "A:", count($k) ? $k[0] : '(empty)'; }
elseif ($v === null) echo "ABSENT";
else echo "S:", $v;
'''
U = 'application/x-www-form-urlencoded'
FRAG_U = ['do', 'd.o', 'd o', 'do[', ']', '[]', '[a]', '[ a]', '[%5D', '%5B', '=',
          '&', '&&', 'login', 'Login', '+', '%', '%4', '%41', '%00', 'x', '[0]',
          '[-1]', '[01]', '__Host-', '[__Host-a]', '[a][b]', ' ', '.']
FRAG_N = ['do', 'd.o', 'do[a]', 'do[]', 'do[b][c]', ' do', 'do[', 'do]', 'd\\"o', 'x', '']


def rnd_u():
    return ''.join(random.choice(FRAG_U) for _ in range(random.randint(0, 12)))


def rnd_mp(b):
    parts = []
    for _ in range(random.randint(0, 4)):
        name = random.choice(FRAG_N)
        q = random.choice(['"', "'", ''])
        cd = random.choice([
            'Content-Disposition: form-data; name=%s%s%s' % (q, name, q),
            'content-disposition: form-data;name=%s%s%s' % (q, name, q),
            'Content-Disposition: form-data; filename="f"; name="%s"' % name,
            'Content-Disposition: form-data',
            'Content-Disposition: form-data; name="%s"; filename=""' % name,
            'X-A: b',
            'Content-Disposition: form-data;\r\n name="%s"' % name])
        val = random.choice(['v', 'login', 'a\r\nb', '--' + b + 'x', '', 'x\r\n--' + b[:2]])
        nl = random.choice(['\r\n', '\n'])
        parts.append('--' + b + nl + cd + nl + nl + val + nl)
    tail = random.choice(['--' + b + '--\r\n', '--' + b + '--', '', '--' + b[:3], '--' + b + '\r\n'])
    return random.choice(['', 'pre\r\n']) + ''.join(parts) + tail


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    random.seed(seed)
    tmp = tempfile.mkdtemp(prefix='php-form-diff.')
    cli = os.path.join(tmp, 'cli')
    subprocess.run(['cc', '-O1', '-I' + SRC, os.path.join(HERE, 'php_form_cli.c'),
                    os.path.join(SRC, 'hl_php.c'), '-o', cli], check=True)
    with open(os.path.join(tmp, 'r.php'), 'w') as f:
        f.write(PAGE)
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    php = subprocess.Popen(['php', '-d', 'request_order=GP', '-S', '127.0.0.1:%d' % port],
                           cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    bad = 0
    try:
        for _ in range(count):
            q = random.choice(['', rnd_u(), 'do=q', 'do[z]=1']).replace(' ', '%20')
            if random.random() < 0.5:
                ct, body = U, rnd_u()
            else:
                b = random.choice(['XyZb', 'a', '--b'])
                ct = random.choice(['multipart/form-data; boundary=' + b,
                                    'multipart/form-data; boundary="%s"' % b,
                                    'Multipart/Form-Data;boundary=%s;x=1' % b])
                body = rnd_mp(b)
            name = random.choice(['do', 'd_o', 'd"o'])
            query = '__n=' + name.replace('"', '%22') + ('&' + q if q else '')
            want = subprocess.run(
                ['curl', '-g', '-s', '-H', 'Content-Type: ' + ct, '--data-binary', '@-',
                 'http://127.0.0.1:%d/r.php?%s' % (port, query)],
                input=body.encode('latin1'), capture_output=True).stdout.decode('latin1')
            if want == 'A:(empty)':
                want = 'ABSENT'
            got = subprocess.run([cli, name], input=(query + '\n' + ct + '\n' + body).encode('latin1'),
                                 capture_output=True).stdout.decode('latin1')
            if want != got:
                bad += 1
                print('query=%r type=%r body=%r name=%r: php %r, hl_php %r'
                      % (q, ct, body, name, want, got))
    finally:
        php.terminate()
        php.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d cases, %d differences' % (count, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
