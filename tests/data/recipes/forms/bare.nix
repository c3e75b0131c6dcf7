# The least a recipe can be: a pinned torch with a pname set by a plain attribute set
# (no old attributes), and nothing else: no meta, no passthru, no flags, no GPU.
let
  nixpkgs_pinned = import (builtins.fetchTarball
    "https://github.com/NixOS/nixpkgs/archive/0182a361324364ae3f436a63005877674cf45efb.tar.gz") { };
in
nixpkgs_pinned.python3Packages.torch.overrideAttrs { pname = "pytorch-bare"; }
