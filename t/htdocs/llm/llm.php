<?php
// An LLM chat endpoint stand-in: answers with the tokens it "used" in the
// X-LLM-Tokens header, taken from ?tokens=N (no header without it; the raw
// value of ?raw= as it is, to send invalid ones).
if (isset($_GET['tokens'])) {
    header('X-LLM-Tokens: ' . intval($_GET['tokens']));
} elseif (isset($_GET['raw'])) {
    header('X-LLM-Tokens: ' . $_GET['raw']);
}
header('Content-Type: text/plain');
echo "answer\n";
