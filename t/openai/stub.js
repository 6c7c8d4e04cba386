// stub.js - a small OpenAI-compatible upstream for t/56-openai-sdk.t, on
// 127.0.0.1 only. POST /v1/chat/completions answers like the real API:
// JSON with "usage", or (stream: true) server-sent events, one chunk per
// word, ending with a usage chunk when stream_options.include_usage is set,
// then "data: [DONE]". The model name sets the cost: "stub-N" reports N
// total tokens (10 prompt + N - 10 completion). STUB_DELAY_MS (default 0)
// spaces the events of a stream. Every request is appended to
// $STUB_LOG as one JSON line {t, path, model, stream}. Usage:
//   node stub.js PORT LOGFILE
'use strict';
const http = require('http');
const fs = require('fs');

const port = Number(process.argv[2]);
const log = process.argv[3];
const delay = Number(process.env.STUB_DELAY_MS || 0);

function usageOf(model) {
    const m = /^stub-(\d+)$/.exec(model || '');
    const total = m ? Number(m[1]) : 20;
    return { prompt_tokens: 10, completion_tokens: total - 10, total_tokens: total };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function stream(res, req, body) {
    const id = 'chatcmpl-stub';
    const created = Math.floor(Date.now() / 1000);
    const chunk = (obj) => res.write('data: ' + JSON.stringify(obj) + '\n\n');
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    const words = ['Hello', ' from', ' the', ' stub', '.'];
    for (let i = 0; i < words.length; i++) {
        if (res.destroyed) return;   // the client went away (req is destroyed once read)
        chunk({ id, object: 'chat.completion.chunk', created, model: body.model,
                choices: [{ index: 0, delta: i ? { content: words[i] } : { role: 'assistant', content: words[i] },
                            finish_reason: null }] });
        if (delay) await sleep(delay);
    }
    chunk({ id, object: 'chat.completion.chunk', created, model: body.model,
            choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (body.stream_options && body.stream_options.include_usage)
        chunk({ id, object: 'chat.completion.chunk', created, model: body.model,
                choices: [], usage: usageOf(body.model) });
    res.end('data: [DONE]\n\n');
}

http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
        let body = {};
        try { body = JSON.parse(raw || '{}'); } catch (e) { body = {}; }
        fs.appendFileSync(log, JSON.stringify({ t: Date.now(), path: req.url, model: body.model,
                                                stream: !!body.stream }) + '\n');
        if (req.method !== 'POST' || !/^\/v1\/chat\/completions/.test(req.url)) {
            res.writeHead(404, { 'Content-Type': 'application/json' });
            res.end('{"error":{"message":"not found"}}');
            return;
        }
        if (body.stream) {
            stream(res, req, body).catch(() => res.destroy());
            return;
        }
        const out = JSON.stringify({
            id: 'chatcmpl-stub', object: 'chat.completion', created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the stub.' },
                        finish_reason: 'stop' }],
            usage: usageOf(body.model),
        });
        const send = () => {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(out);
        };
        if (delay) setTimeout(send, delay); else send();
    });
}).listen(port, '127.0.0.1', () => {
    process.stdout.write('listening ' + port + '\n');
});
