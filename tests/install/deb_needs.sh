#!/bin/sh
# deb_needs.sh ROOT - for test_install_deb: the Debian package of every
# shared library the ELF files under ROOT (an unpacked .deb) need, found
# independently of dpkg-shlibdeps: each NEEDED entry (objdump -p) that ROOT
# does not hold itself, resolved by the loader's cache (ldconfig -p) to a
# file, and that file to the package that installed it (dpkg -S). Prints
# "SONAME PACKAGE" lines, sorted; exits 1 naming a library it cannot
# resolve.
set -eu
root=$1
find "$root" -type f | while read -r f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }'
done | sort -u | while read -r soname; do
  [ -n "$(find "$root" -name "$soname")" ] && continue # ours
  path=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64|x32|64bit|AArch64/ { print $NF; exit }')
  [ -n "$path" ] || path=$(ldconfig -p | awk -v s="$soname" '$1 == s { print $NF; exit }')
  [ -n "$path" ] || { echo "deb_needs.sh: $soname is not in the loader's cache" >&2; exit 1; }
  pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null) ||
    { echo "deb_needs.sh: no package owns $path ($soname)" >&2; exit 1; }
  echo "$soname ${pkg%%[:,]*}"
done | sort
