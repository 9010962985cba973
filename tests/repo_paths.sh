#!/bin/sh
# No file of the repository names a path outside it (the spec is docs/spec/, not a sibling folder):
# no ../<folder outside>, no absolute path into the machine the repository was written on.
cd "$(dirname "$0")/.." || exit 1
hits=$(git ls-files -z | xargs -0 grep -n -I -E '\.\./(shared|seeds|spec|research)/|/work/' -- 2>/dev/null | grep -v '^tests/repo_paths.sh:')
if [ -n "$hits" ]; then
  echo "files naming paths outside the repository:"; echo "$hits"; exit 1
fi
echo "$(git ls-files | wc -l) files: no path outside the repository"
