#!/usr/bin/env bash
# System packages textrobust uses: Debian's WordNet 3.0 database (wordnet-base, and
# wordnet-sense-index for sense keys). `textrobust assets prepare wordnet` then copies it
# into the cache in NLTK's layout.
#
# Installs with apt-get when apt-get exists and we are root; otherwise it prints a warning
# and exits 0 (`textrobust assets` then reports WordNet as missing, with the fix).
# `apt-get update` runs only when a package is not installed yet.
set -euo pipefail

PACKAGES=(wordnet-base wordnet-sense-index)

warn() { printf 'install-system.sh: WARNING: %s\n' "$*" >&2; }

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! command -v dpkg-query >/dev/null 2>&1 || ! installed "$pkg"; then
        missing+=("$pkg")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-system.sh: ${PACKAGES[*]} already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    warn "apt-get not found: install WordNet 3.0 (${missing[*]} on Debian/Ubuntu) yourself,"
    warn "or set TEXTROBUST_WORDNET to an NLTK_DATA folder holding corpora/wordnet."
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    warn "not root: run 'sudo apt-get install -y ${missing[*]}' yourself,"
    warn "or set TEXTROBUST_WORDNET to an NLTK_DATA folder holding corpora/wordnet."
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-system.sh: installing ${missing[*]}"
if ! apt-get update -qq; then
    warn "apt-get update failed; trying the install with the package lists we have"
fi
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    warn "apt-get install ${missing[*]} failed: WordNet will be reported missing by 'textrobust assets'."
    exit 0
fi
echo "install-system.sh: installed ${missing[*]}; now run 'textrobust assets prepare'"
