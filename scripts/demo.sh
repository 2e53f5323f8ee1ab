#!/usr/bin/env bash
# `npm run demo`: bootstrap, build the package (release), install and build the chat app in www/, start
# its server on 127.0.0.1 and print the URL. Ctrl-C stops everything.
#
#   PORT=5173                    the server's port (default 5173)
#   ANTHROPIC_API_KEY / OPENAI_API_KEY / OPENAI_BASE_URL (+ OPENAI_MODEL)   real models (see www/server.mjs);
#                                without them the page talks to the offline demo model
#   PI_DEMO_SKIP_BUILD=1         reuse pkg/ and www/dist as they are (fast restart)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n[demo] %s\n' "$*"; }

SERVER_PID=""
cleanup() {
  trap - INT TERM EXIT
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'echo; log "stopping"; exit 130' INT TERM

if [ "${PI_DEMO_SKIP_BUILD:-}" != "1" ]; then
  log "bootstrap"
  bash scripts/bootstrap.sh

  log "build the package (pkg/)"
  node scripts/build.mjs

  if [ -f www/package-lock.json ]; then
    if [ ! -f www/node_modules/.package-lock.json ] || [ www/package-lock.json -nt www/node_modules/.package-lock.json ]; then
      log "install the app's dependencies (npm ci)"
      npm ci --prefix www --no-audit --no-fund --loglevel=error
    fi
  else
    log "install the app's dependencies (npm install: no lock file yet)"
    npm install --prefix www --no-audit --no-fund --loglevel=error
  fi

  log "build the app (vite build -> www/dist)"
  (cd www && node node_modules/vite/bin/vite.js build --logLevel warn)
fi

[ -f www/dist/index.html ] || { echo "www/dist is missing: run without PI_DEMO_SKIP_BUILD=1" >&2; exit 1; }

log "start the server"
node www/server.mjs &
SERVER_PID=$!

# Print the URL once the server says it listens (or fail if it exits first).
PORT_SHOWN="${PORT:-5173}"
for _ in $(seq 1 100); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    wait "$SERVER_PID" || true
    echo "the server exited (is port $PORT_SHOWN in use? try PORT=5180 npm run demo)" >&2
    exit 1
  fi
  if node -e "fetch('http://127.0.0.1:${PORT_SHOWN}/api/config').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" 2>/dev/null; then
    break
  fi
  sleep 0.2
done

cat <<EOF

  pi-agent-wasm chat demo: http://127.0.0.1:${PORT_SHOWN}/

  Open it in a browser. Ctrl-C stops the server.

EOF
wait "$SERVER_PID"
