#!/usr/bin/env python3
"""Presses a reset button of the hotlimit status page in headless Chromium.

    cdp_reset.py CHROMIUM URL KEY PROFILE_DIR

Starts CHROMIUM headless with --remote-debugging-pipe (the DevTools
protocol as NUL-terminated JSON on file descriptors 3 and 4: no port, no
websocket, standard library only), loads URL, clicks the button of the
form whose hidden "reset" field is KEY, as a person would, and waits for
the page the form leads back to. Prints one JSON object:
{"before": DOM, "clicked": bool, "after": DOM, "url_after": URL}, the DOMs
as serialised after scripts ran. Exit status 0, or 1 with a message on
standard error.
"""
import fcntl
import json
import os
import subprocess
import sys
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--no-proxy-server", "--remote-debugging-pipe"]
TIMEOUT = 30.0


class Browser:
    """A Chromium child spoken to over the DevTools pipe."""

    def __init__(self, chromium, profile):
        cmd_r, self.cmd_w = os.pipe()      # we write, Chromium reads fd 3
        self.res_r, res_w = os.pipe()      # Chromium writes fd 4, we read
        # Above 4, so that the dup2 calls below never meet themselves.
        hi_r, hi_w = _dup_high(cmd_r), _dup_high(res_w)

        def child_fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [chromium] + FLAGS + ["--user-data-dir=" + profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=child_fds)
        for fd in (cmd_r, res_w, hi_r, hi_w):
            os.close(fd)
        self.buf = b""
        self.next_id = 0

    def call(self, method, params=None, session=None):
        """Returns the result of one command; raises on an error answer."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})

    def _read(self):
        """Returns the next message (events included)."""
        while b"\0" not in self.buf:
            chunk = os.read(self.res_r, 65536)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def evaluate(self, session, expr):
        """Returns the value of a JavaScript expression in the page, or
        None while the page is changing (its context destroyed)."""
        try:
            r = self.call("Runtime.evaluate",
                          {"expression": expr, "returnByValue": True}, session)
        except RuntimeError:
            return None
        return r.get("result", {}).get("value")

    def wait_for(self, session, expr):
        """Waits until expr is true in the page; raises after TIMEOUT."""
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            if self.evaluate(session, expr) is True:
                return
            time.sleep(0.1)
        raise RuntimeError("timed out waiting for " + expr)

    def open(self, url, metrics=None):
        """Returns the session of a new tab that loaded url (sized by
        metrics, Emulation.setDeviceMetricsOverride's, when given)."""
        target = self.call("Target.createTarget",
                           {"url": "about:blank"})["targetId"]
        s = self.call("Target.attachToTarget",
                      {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=s)
        if metrics:
            self.call("Emulation.setDeviceMetricsOverride", metrics, s)
        self.call("Page.navigate", {"url": url}, s)
        self.wait_for(s, "document.readyState === 'complete' && "
                         "location.href === %s" % json.dumps(url))
        return s

    def next_page(self, session, mark):
        """Waits for the page after the one where window[mark] was set (a
        new page has no such variable) to load; returns its DOM and URL."""
        self.wait_for(session, "window.%s === undefined && "
                               "document.readyState === 'complete'" % mark)
        return (self.evaluate(session, "document.documentElement.outerHTML"),
                self.evaluate(session, "location.href"))

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _dup_high(fd):
    """Returns a duplicate of fd numbered 10 or above."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        return 1
    chromium, url, key, profile = sys.argv[1:]
    b = Browser(chromium, profile)
    try:
        s = b.open(url)
        before = b.evaluate(s, "document.documentElement.outerHTML")
        # The click, as a person's: the button of the key's form.
        clicked = b.evaluate(s, """(function (key) {
            var forms = document.querySelectorAll('form.reset');
            for (var i = 0; i < forms.length; i++) {
                var f = forms[i], k = f.querySelector('input[name=reset]');
                if (k && k.value === key) {
                    window.hlClicked = true;
                    f.querySelector('button').click();
                    return true;
                }
            }
            return false;
        })(%s)""" % json.dumps(key)) is True
        after, url_after = before, url
        if clicked:
            after, url_after = b.next_page(s, "hlClicked")
        print(json.dumps({"before": before, "clicked": clicked,
                          "after": after, "url_after": url_after}))
        return 0
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        sys.stderr.write("cdp_reset.py: %s\n" % e)
        return 1
    finally:
        b.close()


if __name__ == "__main__":
    sys.exit(main())
