#!/bin/bash
# usage: go build -o /tmp/reelay ./cmd/reelay && docs/ratelimit-figures.sh /tmp/reelay LABEL
#
# Runs `reelay serve` at its defaults on the host's non-loopback address (loopback is not
# limited per address), a fresh one per measurement, and counts the answers to requests sent
# from that one address, on one connection, as fast as curl sends them.
set -u
bin=$1 label=$2
host=$(hostname -I | awk '{print $1}') port=18080
base="http://$host:$port"
start_server() {
	dir=$(mktemp -d)
	"$bin" serve --addr "$host:$port" --data-dir "$dir" >"$dir/log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.2; done
	key=$(grep -o 'rly_[A-Za-z0-9_]*' "$dir/log" | head -1)
}
stop_server() { kill $pid; wait $pid 2>/dev/null; rm -rf "$dir"; }
# flood NAME URL [curl options...]: 1000 requests to URL on a fresh server, statuses tallied.
flood() {
	local name=$1 url=$2; shift 2
	start_server
	for _ in $(seq 1000); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done >"$dir/cfg"
	printf '%-40s %s\n' "1000 × $name:" "$(curl -s -K "$dir/cfg" -w '%{http_code}\n' "$@" | sort | uniq -c | xargs)"
	stop_server
}
echo "== $label"
flood "bad API key" "$base/api/v1/projects" -H 'X-API-Key: rly_live_wrongwrongwrongwrongwrongwrongwrongwrong123'
flood "forged media link" "$base/api/v1/media/m1?exp=4102444800&sig=forged"
flood "OAuth callback, forged state" "$base/api/v1/oauth/youtube/callback?code=c&state=forged"
flood "sandbox consent page" "$base/sandbox/youtube/o/oauth2/v2/auth?response_type=code&client_id=x"
flood "sandbox token endpoint" "$base/sandbox/youtube/token" -d 'grant_type=authorization_code&code=forged'
flood "dashboard sign-in, wrong key" "$base/signin" -b 'reelay_signin=0123456789abcdef0123456789abcdef' \
	-d 'csrf_token=0123456789abcdef0123456789abcdef&api_key=rly_wrong'
# Finding 4: three keys of one account, 60 requests each, interleaved, at the default 20/s burst 40.
start_server
keys=("$key")
for i in 1 2; do
	keys+=("$(curl -s -X POST "$base/api/v1/api-keys" -H "X-API-Key: $key" -H 'Content-Type: application/json' \
		-d "{\"name\":\"k$i\"}" | grep -o '"key":"rly_[A-Za-z0-9_]*"' | cut -d'"' -f4)")
done
sleep 3 # the buckets refill after the two creations
: >"$dir/cfg"
for _ in $(seq 60); do for k in "${keys[@]}"; do
	[ -s "$dir/cfg" ] && echo next >>"$dir/cfg"
	printf 'url = "%s"\noutput = "/dev/null"\nheader = "X-API-Key: %s"\nsilent\nwrite-out = "%%{http_code}\\n"\n' "$base/api/v1/projects" "$k" >>"$dir/cfg"
done; done
t0=$(date +%s.%N)
out=$(curl -K "$dir/cfg" | sort | uniq -c | xargs)
printf '%-40s %s in %.2f s\n' "3 keys × 60 requests:" "$out" "$(echo "$(date +%s.%N) - $t0" | bc)"
stop_server
