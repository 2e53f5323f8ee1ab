#!/usr/bin/env bash
# Installs what the build and the tests need, only where it is missing.
# Safe to run again: every step checks first, so a warm machine takes a second.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pinned version, from `wasm-bindgen = "=X"` or `wasm-bindgen = { version = "=X", … }`.
WB_VERSION=$(sed -n 's/^wasm-bindgen = .*"=\([0-9.]*\)".*/\1/p' Cargo.toml)
if [ -z "$WB_VERSION" ]; then
  echo "[bootstrap] cannot read the pinned wasm-bindgen version from Cargo.toml" >&2
  exit 1
fi
log() { printf '[bootstrap] %s\n' "$*"; }

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $WB_VERSION"; then
  # Not --locked: the CLI's lock file names a webpki-roots version this registry lacks.
  log "installing wasm-bindgen-cli $WB_VERSION (compiles from source, a few minutes)"
  cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
APT_UPDATED=""
apt_install() {
  [ -n "$APT_UPDATED" ] || { $SUDO apt-get update -qq; APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  log "installing Debian chromium and chromium-driver"
  apt_install chromium chromium-driver
fi

# The session store's tests start their own Postgres cluster from Debian's binaries (initdb, pg_ctl).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  log "installing Debian postgresql (the server store's tests start their own cluster on 127.0.0.1)"
  apt_install postgresql
fi

# npm ci only when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
log "ready: $(rustc --version | cut -d' ' -f1-2), wasm-bindgen $WB_VERSION, $(/usr/bin/chromium --version 2>/dev/null | head -1), node $(node --version), postgres $(ls /usr/lib/postgresql | sort -n | tail -1)"
