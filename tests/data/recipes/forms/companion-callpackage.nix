# Unpinned torchaudio callPackage function building its PyTorch inline; `sm_90` as written.
{ python3Packages
, lib
, config
, cudaPackages
}:

let
  gpuArchNum = "90";        # For CMAKE_CUDA_ARCHITECTURES
  gpuArchSM = "sm_90";      # For TORCH_CUDA_ARCH_LIST

  cpuFlags = [
    "-mavx512f"    # AVX-512 Foundation
    "-mfma"        # Fused multiply-add
  ];

  customPytorch = (python3Packages.pytorch.override {
    cudaSupport = true;
    gpuTargets = [ gpuArchSM ];
  }).overrideAttrs (oldAttrs: {
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS ${lib.concatStringsSep " " cpuFlags}"
    '';
  });

in
  (python3Packages.torchaudio.override {
    torch = customPytorch;
  }).overrideAttrs (oldAttrs: {
    pname = "torchaudio-python313-cuda12_8-sm90-avx512";

    meta = oldAttrs.meta // {
      description = "TorchAudio for Hopper (SM90) + AVX-512";
      platforms = [ "x86_64-linux" ];
    };
  })
