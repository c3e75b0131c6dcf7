# The arguments `.override` accepts: the formal arguments of nixpkgs' package functions (the
# union over the nixpkgs revisions the build repositories pin, 2025). nixpkgs itself fails on any
# other name ("called with unexpected argument"), so the stand-in refuses them too.
{
  # pkgs/development/python-modules/torch/source/default.nix (torch 2.7 … 2.13)
  torch = [
    "stdenv" "lib" "fetchFromGitHub" "fetchFromGitLab" "fetchpatch" "git-unroll"
    "buildPythonPackage" "buildPackages" "python" "runCommand" "writeShellScript" "config"
    "cudaSupport" "cudaPackages" "autoAddDriverRunpath" "effectiveMagma" "magma" "magma-hip"
    "magma-cuda-static" "useSystemNccl" "withNvshmem" "withTensorboard" "MPISupport" "mpi"
    "buildDocs" "pkgsHostHost" "callPackage" "cmake" "ninja" "numpy" "packaging" "pyyaml"
    "requests" "six" "symlinkJoin" "which" "pybind11" "pkg-config" "removeReferencesTo"
    "openssl" "apple-sdk_13" "numactl" "llvmPackages" "astunparse" "binutils" "expecttest"
    "filelock" "fsspec" "hypothesis" "jinja2" "networkx" "psutil" "setuptools" "sympy"
    "types-dataclasses" "typing-extensions" "tritonSupport" "triton" "_tritonEffective"
    "triton-cuda" "mklDnnSupport" "blas" "pillow" "tensorboard" "protobuf" "rocmSupport"
    "rocmPackages" "gpuTargets" "vulkanSupport" "vulkan-headers" "vulkan-loader" "shaderc"
  ];
  # pkgs/development/python-modules/torchvision/default.nix (0.23): no cudaSupport or
  # gpuTargets of its own; it takes both from `torch`.
  torchvision = [
    "lib" "stdenv" "torch" "apple-sdk_13" "buildPythonPackage" "darwinMinVersionHook"
    "fetchFromGitHub" "libpng" "ninja" "which" "libjpeg_turbo" "numpy" "pillow" "scipy"
    "pytest" "writableTmpDirAsHomeHook"
  ];
  # pkgs/development/python-modules/torchaudio/default.nix (2.10)
  torchaudio = [
    "lib" "symlinkJoin" "buildPythonPackage" "fetchFromGitHub" "cmake" "pkg-config" "ninja"
    "ffmpeg_6-full" "pybind11" "sox" "torch" "llvmPackages" "cudaSupport" "cudaPackages"
    "rocmSupport" "rocmPackages" "gpuTargets"
  ];
}
