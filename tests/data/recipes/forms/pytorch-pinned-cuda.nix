# Pinned two-stage CUDA recipe: every optional part present.
# Package name: pytorch-python313-cuda12_8-sm61-avx

{ pkgs ? import <nixpkgs> {} }:
let
  nixpkgs_pinned = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3.tar.gz";
  }) {
    config = { allowUnfree = true; cudaSupport = true; };
    overlays = [ (final: prev: { cudaPackages = final.cudaPackages_12_8; }) ];
  };

  gpuArchNum = "61";  # For CMAKE_CUDA_ARCHITECTURES
  gpuArchSM = "6.1";  # For TORCH_CUDA_ARCH_LIST

  # AVX only
  cpuFlags = [
    "-mavx"        # AVX
    "-mno-fma"     # no FMA3
    "-mno-avx2"    # no AVX2
  ];

in
  (nixpkgs_pinned.python3Packages.torch.override {
    cudaSupport = true;
    gpuTargets = [ gpuArchSM ];
  }).overrideAttrs (oldAttrs: {
    pname = "pytorch-python313-cuda12_8-sm61-avx";
    passthru = oldAttrs.passthru // {
      gpuArch = gpuArchSM;
      blasProvider = "cublas";
      cpuISA = "avx";
    };

    # Keep ATen from compiling AVX2 kernels
    cmakeFlags = (oldAttrs.cmakeFlags or []) ++ [
      "-DCXX_AVX2_FOUND=FALSE"
      "-DUSE_NNPACK=OFF"
    ];

    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="${nixpkgs_pinned.lib.concatStringsSep " " cpuFlags} $CXXFLAGS"
      # cuDNN 9.11+ dropped SM < 7.5
      export USE_CUDNN=0
      export USE_FBGEMM=0
      # export USE_MKLDNN=0 (left on)
    '';

    postInstall = (oldAttrs.postInstall or "") + ''
      echo 4 > $out/.metadata-rev
    '';

    meta = oldAttrs.meta // {
      description = "PyTorch for GTX 1080 (SM61) with \"AVX\" \${literally}";
      platforms = [ "x86_64-linux" ];
    };
  })
