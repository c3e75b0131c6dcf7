# The catalogue's unpinned export: the build environment's nixpkgs (pkgs.path), a CUDA 13.0
# overlay, features listed in passthru.disabledFeatures and switched off in the script.
{ pkgs ? import <nixpkgs> {} }:

let
  nixpkgs_env = import pkgs.path {
    system = pkgs.stdenv.hostPlatform.system;
    config = {
      allowUnfree = true;
      cudaSupport = true;
    };
    overlays = [
      (final: prev: { cudaPackages = final.cudaPackages_13_0; })
    ];
  };

  gpuArchNum = "80";        # CMAKE_CUDA_ARCHITECTURES
  gpuArchSM = "sm_80";      # gpuTargets

in
  (nixpkgs_env.python313Packages.torch.override {
    cudaSupport = true;
    gpuTargets = [ gpuArchSM ];
  }).overrideAttrs (oldAttrs: {
    pname = "pytorch-python313-cuda13_0-sm80-armv9";
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export MAX_JOBS=32
      # Switched off for this variant: FBGEMM
      export USE_FBGEMM=0
    '';

    postInstall = (oldAttrs.postInstall or "") + ''
      echo 1 > $out/.metadata-rev
    '';

    passthru = (oldAttrs.passthru or { }) // {
      gpuArch = gpuArchSM;
      blasProvider = "cublas";
      cpuISA = null;
      disabledFeatures = [ "fbgemm" "mkldnn" ];
    };

    meta = (oldAttrs.meta or { }) // {
      description = "PyTorch for A100 (SM80) + ARMv9";
      platforms = [ "aarch64-linux" ];
    };
  })
