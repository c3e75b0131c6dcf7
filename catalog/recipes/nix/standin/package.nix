# Packages as nixpkgs makes them: `.override` re-calls the package function with changed
# arguments (refusing names the real function does not take), `.overrideAttrs` merges the
# returned attributes over the old ones as stdenv.mkDerivation does, and an `.override` after an
# `.overrideAttrs` keeps the attribute overrides (lib.makeOverridable). Every package carries
# `__standin`: what the verifier reads (its kind, Python, CUDA set, GPU targets, the arguments
# the recipe passed), out of reach of the recipe's own attribute overrides.
{ lib }:
let
  # stdenv.mkDerivation's result: the attributes, passthru merged in, outputs pointing back.
  derivation' = attrs: extra:
    let
      name = attrs.name or "${attrs.pname or "unnamed"}-${attrs.version or "0"}";
      self = (attrs.passthru or { }) // attrs // extra // {
        inherit name;
        type = "derivation";
        outPath = "/nix/store/00000000000000000000000000000000-${name}";
        drvPath = "/nix/store/00000000000000000000000000000000-${name}.drv";
        meta = attrs.meta or { };
        out = self;
        dev = self;
        lib = self;
        cxxdev = self;
        outputs = [ "out" ];
      };
    in
    self;

  # f is `old: { … }` or `final: prev: { … }`; the stand-in passes the previous attributes to
  # both forms (it has no attribute fixpoint).
  applyOverride = attrs: f:
    let r = f attrs; in attrs // (if builtins.isFunction r then r attrs else r);

  mkPackage = { what, label ? what, fn, accepted, args ? { }, attrOverrides ? [ ] }:
    let
      made = fn args;
      attrs = builtins.foldl' applyOverride made.attrs attrOverrides;
    in
    derivation' attrs {
      __standin = made.info // { overrideArgs = builtins.attrNames args; };
      override = newArgs:
        let
          given = if builtins.isFunction newArgs then newArgs args else newArgs;
          unknown = if accepted == null then [ ] else
            builtins.filter (n: !(builtins.elem n accepted)) (builtins.attrNames given);
        in
        if unknown != [ ] then
          throw ("${what}.override: nixpkgs' ${label} takes no argument "
            + lib.concatMapStringsSep ", " (n: "'${n}'") unknown)
        else
          mkPackage { inherit what label fn accepted attrOverrides; args = args // given; };
      overrideAttrs = f:
        mkPackage { inherit what label fn accepted args; attrOverrides = attrOverrides ++ [ f ]; };
    };

  # A dependency the recipes only name: an attribute set with a name, a store path and the
  # usual override functions, so filters, interpolation and overlays work on it.
  stub = pname: attrs:
    mkPackage {
      what = pname;
      accepted = null;
      fn = args: {
        attrs = { inherit pname; version = "0"; passthru = { }; meta = { }; } // attrs // args;
        info = { kind = "dependency"; };
      };
    };

  # fetchFromGitHub, fetchpatch, …: a source whose name says what it would fetch.
  fetcher = kind: args:
    stub "${kind}-source" { src = args; };
in
{
  inherit mkPackage stub fetcher;
}
