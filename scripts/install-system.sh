#!/usr/bin/env bash
# System packages textrobust uses: Debian's WordNet 3.0 database (wordnet-base, and
# wordnet-sense-index for sense keys). `textrobust assets prepare wordnet` then copies it
# into the cache in NLTK's layout. Also Chromium, optional: the report tests render
# report.html in headless Chromium (they are skipped without it); a failure to install it
# only prints a warning. Also CMU Link Grammar with its Python binding and English
# dictionaries (python3-link-grammar, link-grammar-dictionaries-en), optional: the
# attribution analysis counts grammar errors with it (the Makefile makes the binding
# importable in the venv); without it the grammar distance is reported as absent.
#
# Installs with apt-get when apt-get exists and we are root; otherwise it prints a warning
# and exits 0 (`textrobust assets` then reports WordNet as missing, with the fix).
# `apt-get update` runs only when a package is not installed yet.
set -euo pipefail

PACKAGES=(wordnet-base wordnet-sense-index)
OPTIONAL=(chromium python3-link-grammar link-grammar-dictionaries-en)

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
missing_optional=()
for pkg in "${OPTIONAL[@]}"; do
    if ! command -v dpkg-query >/dev/null 2>&1 || ! installed "$pkg"; then
        missing_optional+=("$pkg")
    fi
done

if [ "${#missing[@]}" -eq 0 ] && [ "${#missing_optional[@]}" -eq 0 ]; then
    echo "install-system.sh: ${PACKAGES[*]} ${OPTIONAL[*]} already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    if [ "${#missing[@]}" -gt 0 ]; then
        warn "apt-get not found: install WordNet 3.0 (${missing[*]} on Debian/Ubuntu) yourself,"
        warn "or set TEXTROBUST_WORDNET to an NLTK_DATA folder holding corpora/wordnet."
    fi
    if [ "${#missing_optional[@]}" -gt 0 ]; then
        warn "apt-get not found: install ${missing_optional[*]} yourself (report browser test, grammar errors)."
    fi
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    if [ "${#missing[@]}" -gt 0 ]; then
        warn "not root: run 'sudo apt-get install -y ${missing[*]}' yourself,"
        warn "or set TEXTROBUST_WORDNET to an NLTK_DATA folder holding corpora/wordnet."
    fi
    if [ "${#missing_optional[@]}" -gt 0 ]; then
        warn "not root: run 'sudo apt-get install -y --no-install-recommends ${missing_optional[*]}' yourself"
        warn "(the report's browser test; grammar errors in the attribution analysis)."
    fi
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-system.sh: installing ${missing[*]} ${missing_optional[*]}"
if ! apt-get update -qq; then
    warn "apt-get update failed; trying the install with the package lists we have"
fi
if [ "${#missing[@]}" -gt 0 ]; then
    if apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
        echo "install-system.sh: installed ${missing[*]}; now run 'textrobust assets prepare'"
    else
        warn "apt-get install ${missing[*]} failed: WordNet will be reported missing by 'textrobust assets'."
    fi
fi
if [ "${#missing_optional[@]}" -gt 0 ]; then
    if apt-get install -y -qq --no-install-recommends "${missing_optional[@]}"; then
        echo "install-system.sh: installed ${missing_optional[*]}"
    else
        warn "apt-get install ${missing_optional[*]} failed: the report's browser test is skipped and grammar errors are reported absent."
    fi
fi
exit 0
