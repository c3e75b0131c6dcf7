# torchvision fetching its PyTorch recipe from a build-pytorch commit (Darwin MPS).
{ pkgs ? import <nixpkgs> {} }:

let
  nixpkgs_pinned = import (builtins.fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/6a030d535719c5190187c4cec156f335e95e3211.tar.gz";
  }) {
    config = { allowUnfree = true; };
  };

  pytorch_src = builtins.fetchTarball {
    url = "https://github.com/barstoolbluz/build-pytorch/archive/72b3d51.tar.gz";
  };
  customPytorch = import "${pytorch_src}/.flox/pkgs/pytorch-python313-darwin-mps.nix" {};

in
  (nixpkgs_pinned.python3Packages.torchvision.override {
    torch = customPytorch;
  }).overrideAttrs (oldAttrs: {
    pname = "torchvision-python313-darwin-mps";

    postInstall = (oldAttrs.postInstall or "") + ''
      echo 2 > $out/.metadata-rev
    '';

    meta = oldAttrs.meta // {
      description = "TorchVision with MPS for Apple Silicon";
      platforms = [ "aarch64-darwin" ];
    };
  })
