// client.js - the official OpenAI Node SDK (npm package "openai", pinned in
// package-lock.json) as a client of httpd + mod_hotlimit, for
// t/56-openai-sdk.t. Prints one JSON line with what it saw. Usage:
//   node client.js SCENARIO BASE_URL [ARGS...]
// Scenarios:
//   retry         one completion, then a second one that meets a 429: the
//                 SDK's own retry must wait as Retry-After says, then succeed
//   budget N MODEL MAX_TOKENS
//                 N completions at once (no retry), each with max_tokens:
//                 how many were answered, refused (429), and the tokens
//                 the answers' usage reported in total
//   queue N MODEL N completions at once with the SDK's defaults (2
//                 retries): how many were answered and how many failed,
//                 with 429 or otherwise, and how long it all took
'use strict';
const OpenAI = require('openai');

const [scenario, baseURL, ...args] = process.argv.slice(2);

function client(opts) {
    return new OpenAI({ apiKey: 'sk-test-key', baseURL, ...opts });
}

async function retry() {
    const ai = client({ maxRetries: 2, timeout: 20000 });
    const first = await ai.chat.completions.create({ model: 'stub-20', messages: [{ role: 'user', content: 'hi' }] });
    const t0 = Date.now();
    const { data, response } = await ai.chat.completions
        .create({ model: 'stub-20', messages: [{ role: 'user', content: 'again' }] })
        .withResponse();
    return { first: first.choices[0].message.content, second: data.choices[0].message.content,
             status: response.status, waited_ms: Date.now() - t0 };
}

async function budget() {
    const [n, model, maxTokens] = [Number(args[0]), args[1], Number(args[2])];
    const ai = client({ maxRetries: 0, timeout: 30000 });
    const one = () => ai.chat.completions.create({
        model, max_tokens: maxTokens, messages: [{ role: 'user', content: 'hi' }] });
    const all = await Promise.allSettled(Array.from({ length: n }, one));
    const out = { answered: 0, refused: 0, other: [], tokens: 0 };
    for (const r of all) {
        if (r.status === 'fulfilled') {
            out.answered++;
            out.tokens += r.value.usage.total_tokens;
        } else if (r.reason && r.reason.status === 429) {
            out.refused++;
        } else {
            out.other.push(String(r.reason && r.reason.message || r.reason));
        }
    }
    return out;
}

async function queue() {
    const [n, model] = [Number(args[0]), args[1]];
    const ai = client({});
    const t0 = Date.now();
    const one = () => ai.chat.completions.create({
        model, messages: [{ role: 'user', content: 'hi' }] });
    const all = await Promise.allSettled(Array.from({ length: n }, one));
    const out = { answered: 0, refused: 0, other: [] };
    for (const r of all) {
        if (r.status === 'fulfilled') out.answered++;
        else if (r.reason && r.reason.status === 429) out.refused++;
        else out.other.push(String(r.reason && r.reason.message || r.reason));
    }
    out.elapsed_ms = Date.now() - t0;
    return out;
}

const scenarios = { retry, budget, queue };

(async () => {
    const run = scenarios[scenario];
    if (!run) throw new Error('unknown scenario ' + scenario);
    process.stdout.write(JSON.stringify(await run()) + '\n');
})().catch((e) => {
    process.stdout.write(JSON.stringify({ error: String(e && e.message || e),
                                          status: e && e.status }) + '\n');
    process.exitCode = 1;
});
