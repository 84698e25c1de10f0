#!/usr/bin/env bash
# Make Debian's CMU Link Grammar binding (python3-link-grammar, built for the system
# Python 3.11, the venv's Python) importable in the venv, without exposing the rest of
# /usr/lib/python3/dist-packages: one .pth line naming only the binding's folder, as
# Debian's own linkgrammar.pth does. Without the Debian package this prints a note and
# exits 0 (the attribution analysis then reports grammar errors as absent).
set -euo pipefail
PY="${1:-python3}"
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
BINDING=/usr/lib/python3/dist-packages/linkgrammar
if [ -f "$BINDING/linkgrammar.py" ]; then
    echo "$BINDING" > "$SITE/linkgrammar.pth"
    if "$PY" -c 'import linkgrammar' 2>/dev/null; then
        echo "link-system-packages.sh: linkgrammar importable in $SITE"
    else
        echo "link-system-packages.sh: WARNING: linkgrammar found but not importable; grammar errors will be absent" >&2
        rm -f "$SITE/linkgrammar.pth"
    fi
else
    echo "link-system-packages.sh: python3-link-grammar not installed; grammar errors will be reported absent"
fi
