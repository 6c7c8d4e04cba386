<?php $left = $_SERVER['HOTLIMIT_REMAINING'] ?? null; ?>
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hotlimit demo shop</title>
<link rel="stylesheet" href="/assets/site.css"></head>
<body>
<h1>Demo shop</h1>
<p>This PHP site has no throttling code. httpd.conf limits <code>/login.php</code>
to 5 attempts a minute per client; the quota table limits <code>/sms.php</code> to one code every 30 s.</p>
<form method="post" action="/login.php">
  <label>User <input name="user" value="alice"></label>
  <label>Password <input name="password" type="password" value="guess"></label>
  <button>Log in</button>
</form>
<p><a href="/sms.php">Send me an SMS code</a> &middot; <a href="/hotlimit-status">Limiter status</a></p>
</body></html>
