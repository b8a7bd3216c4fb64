#!/bin/sh
# Regenerates the build system from configure.ac, config/*.m4 and the
# Makefile.am fragments. Run once after a fresh clone, and again whenever
# one of those files changes (make also does this by itself).
set -e
cd "$(dirname "$0")"
mkdir -p config
./config/opal_mca_discover.sh
autoreconf --force --install --warnings=all,no-portability
echo "autogen.sh: now run ./configure (see ./configure --help)"
