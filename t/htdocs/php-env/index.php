<?php
// Prints what mod_hotlimit put into the environment of a limited route.
header('Content-Type: text/plain');
foreach (['HOTLIMIT_ROUTE', 'HOTLIMIT_LIMIT', 'HOTLIMIT_REMAINING'] as $k) {
    echo $k . '=' . ($_SERVER[$k] ?? 'unset') . "\n";
}
echo "php ran\n";
