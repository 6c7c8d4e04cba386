<?php
// A login form handler that knows nothing about throttling.
header('Content-Type: text/plain');
echo "login page\n";
echo "remaining=" . ($_SERVER['HOTLIMIT_REMAINING'] ?? 'unset') . "\n";
echo "route=" . ($_SERVER['HOTLIMIT_ROUTE'] ?? 'unset') . "\n";
