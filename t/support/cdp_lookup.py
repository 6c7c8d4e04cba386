#!/usr/bin/env python3
"""Looks an account up on the hotlimit status page in headless Chromium,
and resets it with the page's own button.

    cdp_lookup.py CHROMIUM URL NAME PROFILE_DIR SCREENSHOT_PNG

Loads URL, types NAME into the account lookup box and submits its form as
a person would (a GET form: no script of the page needed), saves a
screenshot of the answer (PNG) to SCREENSHOT_PNG, then clicks the first
reset button of the lookup table and waits for the page the form leads
back to. Prints one JSON object: {"found": DOM after the lookup,
"url_found": URL, "clicked": bool, "after": DOM, "url_after": URL}.
Exit status 0, or 1 with a message on standard error. Uses the DevTools
pipe of cdp_reset.py.
"""
import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp_reset import Browser  # noqa: E402


def main():
    if len(sys.argv) != 6:
        sys.stderr.write(__doc__)
        return 1
    chromium, url, name, profile, png = sys.argv[1:]
    b = Browser(chromium, profile)
    try:
        s = b.open(url, {"width": 1400, "height": 1000,
                         "deviceScaleFactor": 1, "mobile": False})
        # Typed into the box, the form submitted with its button.
        typed = b.evaluate(s, """(function (name) {
            var f = document.getElementById('lookup-form');
            if (!f) return false;
            f.querySelector('input[name=lookup]').value = name;
            window.hlTyped = true;
            f.querySelector('button').click();
            return true;
        })(%s)""" % json.dumps(name)) is True
        if not typed:
            raise RuntimeError("no lookup form on the page")
        found, url_found = b.next_page(s, "hlTyped")
        shot = b.call("Page.captureScreenshot",
                      {"format": "png", "captureBeyondViewport": True}, s)
        with open(png, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        clicked = b.evaluate(s, """(function () {
            var t = document.getElementById('lookup');
            var btn = t && t.querySelector('form.reset button');
            if (!btn) return false;
            window.hlClicked = true;
            btn.click();
            return true;
        })()""") is True
        after, url_after = found, url_found
        if clicked:
            after, url_after = b.next_page(s, "hlClicked")
        print(json.dumps({"found": found, "url_found": url_found,
                          "clicked": clicked, "after": after,
                          "url_after": url_after}))
        return 0
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        sys.stderr.write("cdp_lookup.py: %s\n" % e)
        return 1
    finally:
        b.close()


if __name__ == "__main__":
    sys.exit(main())
