<?php
header("Content-Type: text/plain");
echo "INDEX php of /dip\n";
