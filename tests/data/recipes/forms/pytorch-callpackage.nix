# Unpinned callPackage function using the `pytorch` alias; no overlay, no pin, no metadata.
{ python3Packages
, lib
, config
, cudaPackages
}:

let
  gpuArchNum = "90";
  gpuArchSM = "9.0";
  cpuFlags = [
    "-mavx512f"
    "-mfma"
  ];
in
  (python3Packages.pytorch.override {
    cudaSupport = true;
    gpuTargets = [ gpuArchSM ];
  }).overrideAttrs (oldAttrs: {
    pname = "pytorch-python313-cuda12_8-sm90-avx512";
    preConfigure = (oldAttrs.preConfigure or "") + ''
      export CXXFLAGS="$CXXFLAGS ${lib.concatStringsSep " " cpuFlags}"
    '';
    meta = oldAttrs.meta // {
      description = "PyTorch for H100 (SM90) + AVX-512";
      platforms = [ "x86_64-linux" ];
    };
  })
