# A companion on its package set's own torch (no custom PyTorch); GPU targets written as a
# literal TORCH_CUDA_ARCH_LIST; meta on one line.
{ pkgs ? import <nixpkgs> {} }:
let
  nixpkgs_pinned = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3.tar.gz";
  }) { config = { allowUnfree = true; cudaSupport = true; }; };
in
  nixpkgs_pinned.python312Packages.torchvision.overrideAttrs (old: {
    pname = "torchvision-python312-cuda12_8-multi";
    preConfigure = (old.preConfigure or "") + ''
      export TORCH_CUDA_ARCH_LIST="8.6;9.0"
    '';
    meta = old.meta // { description = "TorchVision for SM86 and SM90"; };
  })
