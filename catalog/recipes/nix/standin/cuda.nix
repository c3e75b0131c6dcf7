# CUDA package sets. `attr` is the nixpkgs attribute the set was chosen by ("cudaPackages" for
# nixpkgs' default, which a recipe gets when it chooses none); the verifier reports it.
{ lib, package }:
attr: version:
let
  # nixpkgs' default capabilities (cudaCapabilities table, no Jetson, no a/f variants): what
  # torch builds for when a recipe gives no gpuTargets.
  defaults = {
    "12" = [ "7.5" "8.0" "8.6" "8.9" "9.0" "10.0" "12.0" ];
    "13" = [ "7.5" "8.0" "8.6" "8.9" "9.0" "10.0" "11.0" "12.0" ];
  };
  major = builtins.head (builtins.splitVersion version);
  libraries = [
    "cccl" "cuda_cccl" "cuda_cudart" "cuda_cupti" "cuda_nvcc" "cuda_nvml_dev" "cuda_nvrtc"
    "cuda_nvtx" "cuda_profiler_api" "cudatoolkit" "cudnn" "cusparselt" "libcublas" "libcufft"
    "libcufile" "libcurand" "libcusolver" "libcusparse" "libcusparse_lt" "libnvshmem" "nccl"
  ];
in
lib.listToAttrs
  (map (name: { inherit name; value = package.stub name { inherit version; }; }) libraries)
// {
  standinAttr = attr;
  cudaMajorMinorVersion = version;
  cudaMajorVersion = major;
  cudaVersion = version;
  flags.cudaCapabilities = defaults.${major} or [ ];
  backendStdenv = package.stub "cuda-backend-stdenv" { };
}
