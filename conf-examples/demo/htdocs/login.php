<?php
// An ordinary login handler: every password but "secret" fails.
$ok = ($_POST['password'] ?? '') === 'secret';
http_response_code($ok ? 200 : 401);
header('Content-Type: text/html; charset=utf-8');
$left = $_SERVER['HOTLIMIT_REMAINING'] ?? 'n/a';
?>
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Login</title>
<link rel="stylesheet" href="/assets/site.css"></head>
<body>
<h1><?= $ok ? 'Welcome back' : 'Wrong password' ?></h1>
<p>Attempts left this minute: <strong><?= htmlspecialchars($left) ?></strong></p>
<p><a href="/">Back</a></p>
</body></html>
