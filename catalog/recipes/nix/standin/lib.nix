# The part of nixpkgs' `lib` that recipes use, written with builtins only.
let
  inherit (builtins) filter concatStringsSep elem foldl' isFunction substring stringLength;

  fix = f: let x = f x; in x;
  extends = overlay: f: final: let prev = f final; in prev // overlay final prev;
  composeExtensions = f: g: final: prev:
    let fApplied = f final prev; prev' = prev // fApplied; in fApplied // g final prev';
  composeManyExtensions = foldl' composeExtensions (_: _: { });

  hasPrefix = pre: s: substring 0 (stringLength pre) s == pre;
  hasSuffix = suf: s:
    let n = stringLength s; m = stringLength suf; in n >= m && substring (n - m) m s == suf;
  removePrefix = pre: s:
    if hasPrefix pre s then substring (stringLength pre) (stringLength s) s else s;
  optional = cond: x: if cond then [ x ] else [ ];
  optionals = cond: xs: if cond then xs else [ ];
  optionalString = cond: s: if cond then s else "";
  optionalAttrs = cond: as: if cond then as else { };
  concatMapStringsSep = sep: f: xs: concatStringsSep sep (map f xs);
  versionAtLeast = a: b: builtins.compareVersions a b >= 0;
  versionOlder = a: b: builtins.compareVersions a b < 0;

  # nixpkgs' lib.platforms (lib/systems/doubles.nix) for the systems recipes name.
  linux = [
    "aarch64-linux" "armv5tel-linux" "armv6l-linux" "armv7a-linux" "armv7l-linux" "i686-linux"
    "loongarch64-linux" "m68k-linux" "microblaze-linux" "microblazeel-linux" "mips-linux"
    "mips64-linux" "mips64el-linux" "mipsel-linux" "powerpc-linux" "powerpc64-linux"
    "powerpc64le-linux" "riscv32-linux" "riscv64-linux" "s390-linux" "s390x-linux" "x86_64-linux"
  ];
  darwin = [ "x86_64-darwin" "aarch64-darwin" ];
in
{
  inherit fix extends composeExtensions composeManyExtensions hasPrefix hasSuffix removePrefix
    optional optionals optionalString optionalAttrs concatMapStringsSep versionAtLeast
    versionOlder filter concatStringsSep elem foldl' isFunction;
  inherit (builtins) attrNames attrValues mapAttrs length head tail listToAttrs;
  flip = f: a: b: f b a;
  id = x: x;
  const = x: _: x;
  toList = x: if builtins.isList x then x else [ x ];
  getName = x: x.pname or (builtins.parseDrvName (x.name or (toString x))).name;
  cmakeFeature = name: value: "-D${name}=${value}";
  cmakeBool = name: value: "-D${name}=${if value then "ON" else "OFF"}";
  platforms = { inherit linux darwin; all = linux ++ darwin; };
  strings = { inherit hasPrefix hasSuffix removePrefix optionalString concatStringsSep
    concatMapStringsSep; };
  lists = { inherit optional optionals filter elem; };
  attrsets = { inherit optionalAttrs; };
}
