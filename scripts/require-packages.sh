#!/bin/sh
# Make sure the system programs a make target needs are present, installing them when possible.
#
#   scripts/require-packages.sh TARGET PROGRAM:PACKAGE...
#   scripts/require-packages.sh "make test" chromium:chromium nix-instantiate:nix-bin
#
# PROGRAM is a command looked up on PATH, or a file's path (it contains a "/"; a glob is
# allowed), e.g. a shared library. When every PROGRAM is found this prints nothing and exits 0 at
# once. Otherwise, as root with apt-get it runs `apt-get update` and `apt-get install` for the
# missing PACKAGEs (output in a log file, not on the terminal) and checks again; in every other
# case (not root, no apt-get, apt-get failed, still missing) it prints one sentence naming the
# command to run and exits 1, so the target stops before doing anything else.
set -uf  # no globbing, except where found() asks for it

target=$1
shift

found() {
  case $1 in
    */*)
      set +f
      for candidate in $1; do
        if [ -e "$candidate" ]; then set -f; return 0; fi
      done
      set -f
      return 1
      ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

missing_programs() {
  for spec in "$@"; do
    found "${spec%%:*}" || printf '%s\n' "$spec"
  done
}

packages_of() {
  for spec in $1; do
    printf '%s ' "${spec##*:}"
  done | sed 's/ $//'
}

# "a", "a and b", "a, b and c": the programs' file names, for the sentence.
programs_of() {
  for spec in $1; do
    program=${spec%%:*}
    printf '%s\n' "${program##*/}"
  done | sed -e ':a' -e 'N;$!ba' -e 's/\n\([^\n]*\)$/ and \1/' -e 's/\n/, /g'
}

missing=$(missing_programs "$@")
[ -z "$missing" ] && exit 0
packages=$(packages_of "$missing")
programs=$(programs_of "$missing")
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$target needs $programs (not found): install them (Debian:" \
    "\`apt-get install $packages\` as root) and try again." >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "$target needs $programs (not found): run \`sudo apt-get install $packages\`" \
    "and try again." >&2
  exit 1
fi

log=$(mktemp "${TMPDIR:-/tmp}/require-packages.XXXXXX.log")
echo "$target: installing $packages with apt-get (log: $log)" >&2
if ! {
  DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $packages
} >"$log" 2>&1; then
  echo "$target needs $programs, and installing $packages failed (see $log):" \
    "run \`apt-get install $packages\` and try again." >&2
  exit 1
fi
still=$(missing_programs $missing)
if [ -n "$still" ]; then
  echo "$target needs $(programs_of "$still"), still not found after installing" \
    "$(packages_of "$still") (see $log): run \`apt-get install --reinstall" \
    "$(packages_of "$still")\` and try again." >&2
  exit 1
fi
rm -f "$log"
echo "$target: installed $packages." >&2
