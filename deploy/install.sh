#!/bin/sh
# Installs a packed ProudAuth (the .tgz of `npm pack`, or any npm package spec) into PREFIX for a
# PostgreSQL deployment, then checks that the installed program loads. The Containerfile runs this
# script, and test/integration/install/packed-install.test.ts runs it exactly as
# docs/deployment.md tells an operator to.
#
#   deploy/install.sh PREFIX PACKAGE [extra npm install flags, e.g. --prefer-offline]
#
# The embedded database (@electric-sql/pglite) is an optional peer and is not installed: serve,
# worker, migrate and identity-cli need only PostgreSQL. Dependencies with native code
# (@node-rs/argon2, @node-rs/bcrypt) pick their binary through optional dependencies, so do not add
# --omit=optional: it removes those binaries too.
set -eu

if [ "$#" -lt 2 ]; then
  echo "usage: $0 PREFIX PACKAGE [npm install flags...]" >&2
  exit 2
fi
prefix=$1
package=$2
shift 2

# A local file is passed to npm as an absolute path, so it does not depend on the directory.
case "$package" in
  /*) ;;
  *) if [ -e "$package" ]; then package="$(cd "$(dirname "$package")" && pwd)/$(basename "$package")"; fi ;;
esac

mkdir -p "$prefix"
cd "$prefix"
if [ ! -f package.json ]; then
  printf '{\n  "name": "proudauth-installation",\n  "private": true\n}\n' > package.json
fi

npm install --omit=dev --no-audit --no-fund --no-update-notifier "$@" "$package"

# The installed program must load all its modules (native bindings included): `help` does that and
# exits 0 without opening a database.
"$prefix/node_modules/.bin/proudauth" help 2>/dev/null || {
  echo "install.sh: $prefix/node_modules/.bin/proudauth does not start" >&2
  "$prefix/node_modules/.bin/proudauth" help
  exit 1
}
echo "installed: $prefix/node_modules/.bin/proudauth and $prefix/node_modules/.bin/identity-cli"
