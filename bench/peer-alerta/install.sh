#!/usr/bin/env bash
# Installs the Alerta peer of bench/peer-alerta/run.ts into .tools/peer-alerta/ (git-ignored).
# Idempotent: rerunning keeps what is there and fixes what is missing.
#
#   bash bench/peer-alerta/install.sh
#
# - PostgreSQL: Debian's `postgresql` package (apt-get install when its binaries are missing);
#   a private cluster in .tools/peer-alerta/pgdata owned by the `postgres` user, started by run.ts
#   on 127.0.0.1 and a free port (never the system cluster, never a Unix socket in /var/run).
# - Python venv .tools/peer-alerta/venv with pinned alerta-server, gunicorn, psycopg2-binary.
# - .tools/peer-alerta/alertad.conf: no auth, the built-in Prometheus webhook
#   (POST /webhooks/prometheus) and Alerta's default plugins.
#   DATABASE_URL is set by run.ts, since the port is chosen per run.
set -euo pipefail

ALERTA_SERVER_VERSION=9.1.0
GUNICORN_VERSION=23.0.0
PSYCOPG2_VERSION=2.9.10

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="$ROOT/.tools/peer-alerta"
mkdir -p "$DIR"

die() { echo "peer-alerta install: $*" >&2; exit 1; }

# --- PostgreSQL (Debian) ---------------------------------------------------------------------
pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [ -z "$(pg_bindir)" ] || [ ! -x "$(pg_bindir)/initdb" ]; then
  command -v apt-get >/dev/null || die "PostgreSQL is missing and there is no apt-get: install Debian's postgresql package"
  [ "$(id -u)" = 0 ] || die "PostgreSQL is missing: run as root (apt-get install postgresql) or install it first"
  echo "installing Debian's postgresql (apt-get)…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
PGBIN="$(pg_bindir)"
[ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] || die "no initdb/pg_ctl under /usr/lib/postgresql/*/bin"
echo "$PGBIN" > "$DIR/pgbin"

# The server refuses to run as root: the cluster belongs to `postgres` (Debian creates that user).
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || die "user 'postgres' does not exist (Debian's postgresql package creates it)"
  PGUSER_OS=postgres
else
  PGUSER_OS="$(id -un)"
fi
echo "$PGUSER_OS" > "$DIR/pguser"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [ ! -f "$DIR/pgdata/PG_VERSION" ]; then
  echo "creating the private PostgreSQL cluster in $DIR/pgdata…"
  rm -rf "$DIR/pgdata"
  mkdir -p "$DIR/pgdata" "$DIR/pgrun"
  [ "$(id -u)" = 0 ] && chown postgres: "$DIR/pgdata" "$DIR/pgrun"
  as_pg "$PGBIN/initdb" -D "$DIR/pgdata" -U alerta --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  # 127.0.0.1 only; the Unix socket in our own directory; fsync stays on (durable like Foghorn's store).
  cat >> "$DIR/pgdata/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$DIR/pgrun'
max_connections = 100
CONF
fi
mkdir -p "$DIR/pgrun"; [ "$(id -u)" = 0 ] && chown postgres: "$DIR/pgrun"
# Every parent must be traversable for the postgres user.
as_pg test -r "$DIR/pgdata/PG_VERSION" || die "the postgres user cannot read $DIR/pgdata (a parent directory is not traversable?)"

# --- Python venv ---------------------------------------------------------------------------------
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null || die "python3 is missing"
"$PY" -c 'import sys; assert sys.version_info >= (3, 8)' || die "python3 >= 3.8 needed"
if [ ! -x "$DIR/venv/bin/python" ]; then
  echo "creating the venv $DIR/venv…"
  "$PY" -m venv "$DIR/venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
fi
want="alerta-server==$ALERTA_SERVER_VERSION gunicorn==$GUNICORN_VERSION psycopg2-binary==$PSYCOPG2_VERSION"
if ! "$DIR/venv/bin/python" -m pip freeze 2>/dev/null | grep -qix "alerta-server==$ALERTA_SERVER_VERSION" ||
   ! "$DIR/venv/bin/python" -m pip freeze 2>/dev/null | grep -qix "gunicorn==$GUNICORN_VERSION"; then
  echo "pip install $want…"
  "$DIR/venv/bin/python" -m pip install -q $want || die "pip install failed"
fi
"$DIR/venv/bin/python" -c 'import alerta.app, psycopg2, gunicorn' || die "alerta-server does not import in the venv"

# --- alertad.conf --------------------------------------------------------------------------------
cat > "$DIR/alertad.conf" <<'CONF'
# Written by bench/peer-alerta/install.sh. DATABASE_URL comes from the environment (run.ts).
AUTH_REQUIRED = False
DATABASE_NAME = 'alerta'
LOG_LEVEL = 'WARNING'
DEBUG = False
CONF

echo "peer-alerta: ready ($("$DIR/venv/bin/python" -m pip freeze | grep -iE '^(alerta-server|gunicorn|psycopg2-binary|flask)==' | tr '\n' ' '); PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'))"
