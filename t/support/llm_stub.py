#!/usr/bin/env python3
"""llm_stub.py - a stand-in LLM backend for t/51-cost-usage.t (python3
standard library only): answers in the shapes the real APIs use and
reports the tokens of each answer in its body, as they do.

Usage: llm_stub.py PORT   (listens on 127.0.0.1:PORT until killed)

GET paths (query: tokens=N, the answer's total; gap=MS between events;
words=N the model's text cut to N words; fake=1 puts a fake usage object
in the model's text):
  /chat-json       OpenAI Chat Completions answer, usage.total_tokens
  /chat-sse        Chat Completions stream with stream_options.include_usage:
                   chunks with "usage": null, one last chunk with the usage
                   and empty choices, then data: [DONE]
  /responses-json  OpenAI Responses answer (usage input/output/total)
  /responses-sse   Responses stream: response.created ... response.completed
                   (usage nested in event.response.usage)
  /anthropic-sse   Anthropic Messages stream: message_start (input_tokens in
                   message.usage), deltas, message_delta (output_tokens)
  /anthropic-json  Anthropic Messages answer (usage input/output)
Each answer is HTTP/1.0 without Content-Length, written event by event and
flushed, so a stream arrives as it is written.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

FAKE = 'Here is JSON: {"usage":{"total_tokens":1,"prompt_tokens":1}}'


def sse(obj, event=None):
    """Returns one SSE event carrying obj as JSON (bytes)."""
    head = "event: %s\n" % event if event else ""
    return (head + "data: " + json.dumps(obj) + "\n\n").encode()


def chat_json(n, text):
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}]}
    if n is not None:
        body["usage"] = {"prompt_tokens": n // 4, "completion_tokens": n - n // 4,
                         "total_tokens": n,
                         "prompt_tokens_details": {"cached_tokens": 0}}
    return [json.dumps(body).encode()]


def chat_sse(n, text):
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk",
                "model": "stub", "usage": None,
                "choices": [{"index": 0, "delta": delta,
                             "finish_reason": finish}]}
    out = [sse(chunk({"role": "assistant", "content": ""}))]
    out += [sse(chunk({"content": w + " "})) for w in text.split(" ")]
    out.append(sse(chunk({}, "stop")))
    if n is not None:
        out.append(sse({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                        "model": "stub", "choices": [],
                        "usage": {"prompt_tokens": n // 4,
                                  "completion_tokens": n - n // 4,
                                  "total_tokens": n}}))
    out.append(b"data: [DONE]\n\n")
    return out


def responses_usage(n):
    return {"input_tokens": n // 4, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": n - n // 4,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": n}


def responses_json(n, text):
    return [json.dumps({"id": "resp_1", "object": "response", "status": "completed",
                        "output": [{"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text",
                                                 "text": text}]}],
                        "usage": responses_usage(n)}).encode()]


def responses_sse(n, text):
    resp = {"id": "resp_1", "object": "response", "status": "in_progress",
            "output": [], "usage": None}
    out = [sse({"type": "response.created", "response": resp}, "response.created")]
    out += [sse({"type": "response.output_text.delta", "delta": w + " "},
                "response.output_text.delta") for w in text.split(" ")]
    done = dict(resp, status="completed", usage=responses_usage(n))
    out.append(sse({"type": "response.completed", "response": done},
                   "response.completed"))
    return out


def anthropic_sse(n, text):
    inp = n // 4
    out = [sse({"type": "message_start",
                "message": {"id": "msg_1", "type": "message", "role": "assistant",
                            "content": [], "model": "stub",
                            "usage": {"input_tokens": inp, "output_tokens": 1}}},
               "message_start"),
           sse({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}},
               "content_block_start"),
           sse({"type": "ping"}, "ping")]
    out += [sse({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": w + " "}},
                "content_block_delta") for w in text.split(" ")]
    out.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    out.append(sse({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": n - inp}}, "message_delta"))
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


def anthropic_json(n, text):
    return [json.dumps({"id": "msg_1", "type": "message", "role": "assistant",
                        "content": [{"type": "text", "text": text}],
                        "stop_reason": "end_turn",
                        "usage": {"input_tokens": n // 4,
                                  "output_tokens": n - n // 4}}).encode()]


SHAPES = {
    "/chat-json": (chat_json, "application/json"),
    "/chat-sse": (chat_sse, "text/event-stream"),
    "/responses-json": (responses_json, "application/json"),
    "/responses-sse": (responses_sse, "text/event-stream"),
    "/anthropic-sse": (anthropic_sse, "text/event-stream"),
    "/anthropic-json": (anthropic_json, "application/json"),
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        shape = SHAPES.get(url.path)
        if shape is None:
            self.send_error(404)
            return
        make, ctype = shape
        n = int(q["tokens"]) if "tokens" in q else None
        text = FAKE if q.get("fake") else "Hello from the stub model"
        if "words" in q:
            text = " ".join(text.split(" ")[:int(q["words"])])
        gap = int(q.get("gap", "0")) / 1000.0
        events = make(n, text)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for i, ev in enumerate(events):
            if i and gap:
                time.sleep(gap)
            self.wfile.write(ev)
            self.wfile.flush()

    def log_message(self, fmt, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
