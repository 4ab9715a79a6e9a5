#!/usr/bin/env bash
# install-seaweedfs.sh builds SeaweedFS's `weed` (an object store with an S3 gateway, written
# in Go) from the Go module proxy at the version below, into a cache folder outside the
# repository, and prints the binary's path. A binary already built there is used again at once.
#
# `go install module@version` refuses SeaweedFS because its go.mod has replace directives, so
# the module is downloaded, copied out of the read-only module cache and built as the main
# module. That takes about five minutes on two cores.
#
# The cache is $REELAY_PEERS_CACHE, else $XDG_CACHE_HOME/reelay-peers, else
# ~/.cache/reelay-peers. Used by the S3 tests (internal/media/s3test) and .ci/run.
set -euo pipefail
module=github.com/seaweedfs/seaweedfs
version=v0.0.0-20261109003541-7506e5f91cd6
cache="${REELAY_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reelay-peers}"
dir="$cache/seaweedfs-$version"
if [ ! -x "$dir/weed" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.seaweedfs-XXXXXX")
  trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  src=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [ -z "$src" ] || [ ! -d "$src" ]; then
    echo "install-seaweedfs.sh: go mod download did not give $module@$version" >&2
    exit 1
  fi
  cp -R "$src" "$tmp/src"
  chmod -R u+w "$tmp/src"
  (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -o "$tmp/out/weed" ./weed) >&2
  mkdir -p "$dir"
  # Another build may have finished first: either binary is the same program.
  mv -f "$tmp/out/weed" "$dir/weed.$$" && mv -f "$dir/weed.$$" "$dir/weed"
fi
echo "$dir/weed"
