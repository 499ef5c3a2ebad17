#!/usr/bin/env bash
# Production install (DESIGN §1): builds dist/timbre, installs it to /usr/local/bin, creates the `timbre` system user,
# the data dir /var/lib/timbre (0700) and a systemd unit, left stopped until the operator has created the company.
#   sudo ./install.sh            install or upgrade
#   DESTDIR=/tmp/x ./install.sh  stage into a folder (packaging, tests): no user, no systemctl
set -euo pipefail
cd "$(dirname "$0")"

DESTDIR="${DESTDIR:-}"
BIN_DIR="$DESTDIR/usr/local/bin"
DATA_DIR="$DESTDIR/var/lib/timbre"
UNIT_DIR="$DESTDIR/etc/systemd/system"
ENV_FILE="$DESTDIR/etc/timbre/timbre.env"

step() { printf '[install] %s\n' "$*"; }

if [ -z "$DESTDIR" ] && [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (sudo ./install.sh), or set DESTDIR to stage into a folder" >&2
  exit 1
fi

if [ "${SKIP_BUILD:-0}" != "1" ]; then
  step "installing dependencies (npm ci) and building dist/timbre"
  TIMBRE_SKIP_RELEASE_RUNTIMES=1 npm ci --no-audit --no-fund
  npm run build
fi
[ -x dist/timbre ] || { echo "install.sh: dist/timbre is missing" >&2; exit 1; }

step "binary → $BIN_DIR/timbre"
install -d "$BIN_DIR"
install -m 0755 dist/timbre "$BIN_DIR/timbre"

if [ -z "$DESTDIR" ] && ! id timbre >/dev/null 2>&1; then
  step "creating system user timbre"
  useradd --system --home-dir /var/lib/timbre --shell /usr/sbin/nologin timbre
fi

step "data dir → $DATA_DIR (0700)"
install -d -m 0700 "$DATA_DIR"
[ -z "$DESTDIR" ] && chown timbre:timbre "$DATA_DIR"

if [ ! -f "$ENV_FILE" ]; then
  step "settings → $ENV_FILE (edit, then restart)"
  install -d "$(dirname "$ENV_FILE")"
  cat > "$ENV_FILE" <<'ENV'
# Timbre settings (README "Configuración"). Flags in ExecStart win over these.
TIMBRE_DATA_DIR=/var/lib/timbre
TIMBRE_HOST=127.0.0.1
TIMBRE_PORT=8080
TIMBRE_SII=sii
TIMBRE_LOG=info
ENV
  chmod 0640 "$ENV_FILE"
fi

step "systemd unit → $UNIT_DIR/timbre.service"
install -d "$UNIT_DIR"
cat > "$UNIT_DIR/timbre.service" <<'UNIT'
[Unit]
Description=Timbre: facturación electrónica (DTE)
After=network-online.target
Wants=network-online.target

[Service]
User=timbre
Group=timbre
EnvironmentFile=/etc/timbre/timbre.env
ExecStart=/usr/local/bin/timbre serve
Restart=on-failure
RestartSec=5
KillSignal=SIGTERM
# serve drains and exits within 10 s of SIGTERM; past this systemd kills it, which it survives like any crash.
TimeoutStopSec=15
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true
ReadWritePaths=/var/lib/timbre
UMask=0077

[Install]
WantedBy=multi-user.target
UNIT

if [ -z "$DESTDIR" ] && command -v systemctl >/dev/null 2>&1; then
  systemctl daemon-reload || true
fi

cat <<NEXT
[install] done. Next steps:
  sudo -u timbre timbre empresa create --data-dir /var/lib/timbre --rut … --razon-social … (see timbre empresa create --help)
  sudo -u timbre timbre apikey create --data-dir /var/lib/timbre --empresa RUT --write
  sudo systemctl enable --now timbre
  Back up /var/lib/timbre/master.key somewhere safe: without it stored certificates and CAFs are unusable.
NEXT
