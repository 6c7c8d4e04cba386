// client.js - the official OpenAI and Anthropic Node SDKs (npm packages
// "openai" and "@anthropic-ai/sdk", pinned in package-lock.json) as
// clients of httpd + mod_hotlimit, for t/56-openai-sdk.t and
// t/81-provider-sdk.t. Prints one JSON line with what it saw. Usage:
//   node client.js SCENARIO BASE_URL [ARGS...]
// Scenarios:
//   retry         one completion, then a second one that meets a 429: the
//                 SDK's own retry must wait as Retry-After says, then succeed
//   openai-error  one completion, no retry: the RateLimitError as the
//                 developer sees it (message, type, code, status)
//   openai-retry  one completion, then a second that meets a 429: the
//                 SDK's own retry (it waits as retry-after-ms says)
//   anthropic-error
//                 one message with the Anthropic SDK, no retry: its error
//   anthropic-keys MODE KEY,KEY,...
//                 one message per key with the Anthropic SDK, no retry,
//                 one after the other; MODE apikey: the key as apiKey (the
//                 SDK sends it as it does: 1.16.0 as "Authorization:
//                 Bearer"), xapikey: as an "x-api-key" header and no
//                 apiKey; prints each answer's status (200, 429, ...) and
//                 the headers the SDK sent on its first request
//   budget N MODEL MAX_TOKENS
//                 N completions at once (no retry), each with max_tokens:
//                 how many were answered, refused (429), and the tokens
//                 the answers' usage reported in total
//   queue N MODEL N completions at once with the SDK's defaults (2
//                 retries): how many were answered and how many failed,
//                 with 429 or otherwise, and how long it all took
'use strict';
const OpenAI = require('openai');
const Anthropic = require('@anthropic-ai/sdk');

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

// What an SDK error shows the developer.
function seen(e) {
    return { ok: false, class: e && e.constructor && e.constructor.name,
             status: e && e.status, message: String(e && e.message),
             type: e && e.type, code: e && e.code, body: e && e.error,
             headers: e && e.headers && Object.fromEntries(
                 typeof e.headers.entries === 'function' ? e.headers.entries()
                                                         : Object.entries(e.headers)) };
}

async function openaiError() {
    const ai = new OpenAI({ apiKey: 'sk-test-key', baseURL, maxRetries: 0, timeout: 20000 });
    try {
        await ai.chat.completions.create({ model: 'stub-20', messages: [{ role: 'user', content: 'hi' }] });
        return { ok: true };
    } catch (e) {
        return seen(e);
    }
}

async function openaiRetry() {
    const ai = new OpenAI({ apiKey: 'sk-retry-key', baseURL, maxRetries: 2, timeout: 20000 });
    const ask = (content) => ai.chat.completions.create({ model: 'stub-20', messages: [{ role: 'user', content }] });
    await ask('hi');
    const t0 = Date.now();
    const r = await ask('again');
    return { ok: true, second: r.choices[0].message.content, waited_ms: Date.now() - t0 };
}

async function anthropicError() {
    const ai = new Anthropic({ apiKey: 'sk-ant-key', baseURL, maxRetries: 0, timeout: 20000 });
    try {
        await ai.messages.create({ model: 'claude-stub', max_tokens: 16,
                                   messages: [{ role: 'user', content: 'hi' }] });
        return { ok: true };
    } catch (e) {
        return seen(e);
    }
}

async function anthropicKeys() {
    const [mode, keys] = [args[0], args[1].split(',')];
    const out = { statuses: [], sent: null };
    for (const key of keys) {
        const opts = mode === 'xapikey'
            ? { apiKey: null, defaultHeaders: { 'x-api-key': key } }
            : { apiKey: key };
        const ai = new Anthropic({ ...opts, baseURL, maxRetries: 0, timeout: 20000,
            fetch: async (url, init) => {
                if (!out.sent) {
                    const h = new Headers(init.headers);
                    out.sent = { authorization: h.get('authorization'),
                                 'x-api-key': h.get('x-api-key') };
                }
                return fetch(url, init);
            } });
        try {
            await ai.messages.create({ model: 'claude-stub', max_tokens: 16,
                                       messages: [{ role: 'user', content: 'hi' }] });
            out.statuses.push(200);
        } catch (e) {
            out.statuses.push(e && e.status);
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

const scenarios = { retry, budget, queue, 'openai-error': openaiError, 'openai-retry': openaiRetry,
                    'anthropic-error': anthropicError, 'anthropic-keys': anthropicKeys };

(async () => {
    const run = scenarios[scenario];
    if (!run) throw new Error('unknown scenario ' + scenario);
    process.stdout.write(JSON.stringify(await run()) + '\n');
})().catch((e) => {
    process.stdout.write(JSON.stringify({ error: String(e && e.message || e),
                                          status: e && e.status }) + '\n');
    process.exitCode = 1;
});
