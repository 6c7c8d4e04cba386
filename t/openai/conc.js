// conc.js - HotLimitConcurrency seen by the official OpenAI Node SDK, for
// t/66-concurrency-sdk.t. Prints one JSON line with what it saw. Usage:
//   node conc.js BASE_URL
// With HotLimitConcurrency 2 by=header:Authorization in front of a stub
// whose streams last a few seconds: two streams of one key run at once; a
// third is refused (429, Retry-After: 1, no SDK retry here); a stream the
// client aborts mid-way gives its slot back, so the next one is admitted
// while the other still runs.
'use strict';
const OpenAI = require('openai');

const [baseURL] = process.argv.slice(2);
const ai = new OpenAI({ apiKey: 'sk-conc-key', baseURL, maxRetries: 0, timeout: 30000 });
const ask = () => ai.chat.completions.create({
    model: 'stub-20', stream: true, messages: [{ role: 'user', content: 'hi' }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Reads stream s to its end; returns the text.
async function text(s) {
    let out = '';
    for await (const c of s)
        out += (c.choices[0] && c.choices[0].delta.content) || '';
    return out;
}

(async () => {
    const t0 = Date.now();
    const step = (m) => process.stderr.write(`${Date.now() - t0} ms: ${m}\n`);
    const s1 = await ask();
    step('s1');
    const s2 = await ask();
    step('s2');
    const it1 = s1[Symbol.asyncIterator]();
    const firstWord = (await it1.next()).value.choices[0].delta.content;
    let third = {};
    try {
        await ask();
        third = { status: 200 };
    } catch (e) {
        third = { status: e.status, retry_after: e.headers && (e.headers.get
            ? e.headers.get('retry-after') : e.headers['retry-after']) };
    }
    step('third ' + JSON.stringify(third));
    s1.controller.abort();                 // gone mid-stream
    // httpd learns that the client went away when a write to it fails:
    // at the stub's next events. Ask again until admitted (5 s at most).
    let fourth = { status: 0 };
    const t1 = Date.now();
    let s2End = null;
    const s2Text = text(s2).then((t) => { s2End = Date.now(); return t; });
    while (Date.now() - t1 < 5000) {
        try {
            const s4 = await ask();
            const admitted = Date.now();
            fourth = { status: 200, admitted_ms: admitted - t1,
                       before_second_ended: s2End === null, text: await text(s4) };
            break;
        } catch (e) {
            fourth = { status: e.status };
            if (e.status !== 429)
                break;
            await sleep(200);
        }
    }
    step('fourth ' + JSON.stringify(fourth));
    const second = await s2Text;
    process.stdout.write(JSON.stringify({ first_word: firstWord, third, fourth, second }) + '\n');
})().catch((e) => {
    process.stdout.write(JSON.stringify({ error: String(e && e.message || e),
                                          status: e && e.status }) + '\n');
    process.exitCode = 1;
});
