#!/usr/bin/env bash
# System packages the reports and their tests need, from Debian's archive:
#   chromium          the real-browser test (Playwright drives it; no browser download)
#   libpango/fonts    WeasyPrint's PDF rendering (`beyondauc report --pdf`)
#   poppler-utils     pdftoppm/pdftotext, to look at every page of a report's PDF as an image or text
# Installs only what is missing; needs root (or sudo) the first time.
set -euo pipefail
packages=(chromium libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core poppler-utils)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" > /dev/null
