<?php
header("Content-Type: text/plain");
echo "LOGIN php reached\n";
