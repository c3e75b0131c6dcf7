# Evaluate the recipes listed in `listFile` (a JSON list of absolute paths) one after another and
# trace one line per recipe, "<nonce> {"i": N, "record": …}", as soon as it is evaluated. A
# recipe that fails stops the run after the lines of the ones before it, so the caller knows
# which file failed and resumes after it; the nonce keeps a recipe's own traces apart.
{ listFile, nonce }:
let
  scope = import ./scope.nix;
  files = builtins.fromJSON (builtins.readFile listFile);
  report = i:
    let record = scope.recordOfFile (builtins.elemAt files i); in
    builtins.trace "${nonce} ${builtins.toJSON { inherit i record; }}" i;
in
builtins.foldl' (n: i: builtins.seq (report i) (n + 1)) 0
  (builtins.genList (i: i) (builtins.length files))
