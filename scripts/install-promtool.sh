#!/usr/bin/env bash
# Installs promtool, Prometheus's own rule checker, which test/alert-rules.test.ts runs on
# deploy/prometheus/*.yml: Debian ships it in the package `prometheus` (the server is not
# started; only the binary is used). Idempotent; needs root (or sudo) for apt-get. Prints the
# tool's path and version.
set -euo pipefail

if command -v promtool >/dev/null 2>&1; then
  echo "promtool already installed: $(command -v promtool) ($(promtool --version 2>&1 | head -n 1))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-promtool: not root and no sudo; install the Debian package 'prometheus' yourself" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet; refresh them once, quietly, if the package is unknown.
if ! apt-cache show prometheus >/dev/null 2>&1; then
  $SUDO apt-get update -qq
fi
# --no-install-recommends: the rule checker needs neither the node exporter nor the web assets.
$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null

echo "promtool installed: $(command -v promtool) ($(promtool --version 2>&1 | head -n 1))"
