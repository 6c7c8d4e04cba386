<?php
header('Content-Type: text/plain; charset=utf-8');
echo "An SMS code was sent (pretend). Next one allowed in 30 s.\n";
