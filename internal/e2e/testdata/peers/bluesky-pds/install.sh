#!/usr/bin/env bash
# install.sh installs the reference Bluesky PDS and the PLC directory, at the versions
# package-lock.json pins (npm ci), into a cache folder outside the repository, and prints that
# folder. A folder already installed from the same lock file is used again at once.
#
# The cache is $REELAY_PEERS_CACHE, else $XDG_CACHE_HOME/reelay-peers, else
# ~/.cache/reelay-peers. The PDS's better-sqlite3 is built from source against the system's
# Node.js headers (npm_config_build_from_source, npm_config_nodedir), since no prebuilt
# binary is fetched here. Used by the peer test (internal/e2e/blueskypds_test.go) and .ci/run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="${REELAY_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reelay-peers}"
lock=$(sha256sum "$here/package-lock.json" | cut -c1-16)
dir="$cache/bluesky-pds-$lock"
if [ ! -f "$dir/.installed" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.bluesky-pds-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp "$here/package.json" "$here/package-lock.json" "$tmp/"
  export npm_config_build_from_source=true
  if [ -z "${npm_config_nodedir:-}" ] && [ -d /usr/include/node ]; then
    export npm_config_nodedir=/usr
  fi
  (cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error) >&2
  touch "$tmp/.installed"
  # Another install of the same lock may have finished first: then its folder is kept.
  if mv -T "$tmp" "$dir" 2>/dev/null; then
    trap - EXIT
  fi
fi
echo "$dir"
