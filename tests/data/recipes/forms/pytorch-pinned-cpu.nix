# CPU-only, one-stage override; both Linux systems; no passthru, no metadata-rev.
{ pkgs ? import <nixpkgs> {} }:
let
  nixpkgs_pinned = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";
  }) { config = { allowUnfree = true; }; };

  cpuFlags = [ "-mavx2" "-mfma" "-mf16c" ];
in nixpkgs_pinned.python312Packages.torch.overrideAttrs (oldAttrs: {
  pname = "pytorch-python312-cpu-avx2";

  preConfigure = (oldAttrs.preConfigure or "") + ''
    export USE_CUDA=0
    export USE_CUDNN=0
    export CXXFLAGS="${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"
  '';

  meta = oldAttrs.meta // {
    description = "PyTorch CPU-only optimized for AVX2";
    platforms = [ "x86_64-linux" "aarch64-linux" ];
  };
})
