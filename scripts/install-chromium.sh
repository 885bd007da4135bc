#!/usr/bin/env bash
# Installs the headless Chromium the browser test (test/ui.test.ts) drives: Debian's package
# `chromium`, never a browser download of playwright's own (there is no such network here).
# Idempotent; needs root (or sudo) for apt-get. Prints the browser's path and version.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium already installed: $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-chromium: not root and no sudo; install the Debian package 'chromium' yourself" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet; refresh them once, quietly, if the package is unknown.
if ! apt-cache show chromium >/dev/null 2>&1; then
  $SUDO apt-get update -qq
fi
$SUDO apt-get install -y -qq chromium >/dev/null

echo "chromium installed: $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"
