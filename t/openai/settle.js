// settle.js - the official OpenAI Node SDK sending N completions of one
// key at once against a token budget with reservations (reserve=), for
// t/88-reserve-retry.t: what the 429s said (Retry-After, retry-after-ms)
// and whether the SDK's own retries then got every answer. Prints one
// JSON line. Usage:
//   node settle.js BASE_URL KEY N MODEL MAX_TOKENS MAX_RETRIES
'use strict';
const OpenAI = require('openai');

const [baseURL, apiKey, n, model, maxTokens, maxRetries] = process.argv.slice(2);

(async () => {
    const seen = { attempts: 0, refusals: 0, retry_after: [], retry_after_ms: [] };
    // Every attempt, the SDK's retries included, as the SDK receives it.
    const fetchSeen = async (url, init) => {
        const res = await fetch(url, init);
        seen.attempts++;
        if (res.status === 429) {
            seen.refusals++;
            seen.retry_after.push(Number(res.headers.get('retry-after')));
            seen.retry_after_ms.push(Number(res.headers.get('retry-after-ms')));
        }
        return res;
    };
    const ai = new OpenAI({ apiKey, baseURL, maxRetries: Number(maxRetries),
                            timeout: 30000, fetch: fetchSeen });
    const one = () => ai.chat.completions.create({
        model, max_tokens: Number(maxTokens), messages: [{ role: 'user', content: 'hi' }] });
    const t0 = Date.now();
    const all = await Promise.allSettled(Array.from({ length: Number(n) }, one));
    const out = { answered: 0, failed: 0, errors: [], ms: Date.now() - t0, ...seen };
    for (const r of all) {
        if (r.status === 'fulfilled') out.answered++;
        else { out.failed++; out.errors.push(String(r.reason && r.reason.message || r.reason)); }
    }
    out.errors = out.errors.slice(0, 3);
    process.stdout.write(JSON.stringify(out) + '\n');
})().catch((e) => {
    process.stdout.write(JSON.stringify({ error: String(e && e.message || e) }) + '\n');
    process.exitCode = 1;
});
