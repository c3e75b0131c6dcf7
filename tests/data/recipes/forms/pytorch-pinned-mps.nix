# Darwin MPS: no CPU flags, no GPU targets; MPS switched on in the script.
{ pkgs ? import <nixpkgs> {} }:
let
  nixpkgs_pinned = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3.tar.gz";
  }) { config = { allowUnfree = true; }; };
in
nixpkgs_pinned.python312Packages.torch.overrideAttrs (oldAttrs: {
  pname = "pytorch-python312-darwin-mps";
  passthru = oldAttrs.passthru // {
    gpuArch = "mps";
    blasProvider = "veclib";
    cpuISA = null;
  };
  preConfigure = (oldAttrs.preConfigure or "") + ''
    export USE_CUDA=0
    export USE_MPS=1
  '';
  meta = oldAttrs.meta // {
    description = "PyTorch with MPS for Apple Silicon";
    platforms = [ "aarch64-darwin" ];
  };
})
