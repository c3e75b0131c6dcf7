# torchaudio importing the sibling PyTorch recipe; its GPU target only in the build script.
{ pkgs ? import <nixpkgs> {} }:
let
  nixpkgs_pinned = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3.tar.gz";
  }) {
    config = { allowUnfree = true; cudaSupport = true; };
    overlays = [ (final: prev: { cudaPackages = final.cudaPackages_12_8; }) ];
  };

  gpuArchSM = "7.5";

  customPytorch = import ./pytorch-python312-cuda12_8-sm75-avx.nix {};

  cpuFlags = [
    "-mavx"
    "-mno-avx2"
  ];

in
  (nixpkgs_pinned.python312Packages.torchaudio.override {
    torch = customPytorch;
  }).overrideAttrs (oldAttrs: {
    pname = "torchaudio-python312-cuda12_8-sm75-avx";
    passthru = (oldAttrs.passthru or {}) // {
      gpuArch = gpuArchSM;
      cpuISA = "avx";
    };

    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"
      export TORCH_CUDA_ARCH_LIST="${gpuArchSM}"
    '';

    meta = oldAttrs.meta // {
      description = "Torchaudio for T4 (SM75) with AVX";
      platforms = [ "x86_64-linux" ];
    };
  })
