<?php
// Exactness under prefork + mod_php: knows nothing about throttling.
header('Content-Type: text/plain');
echo "php ok pid=" . getmypid() . "\n";
