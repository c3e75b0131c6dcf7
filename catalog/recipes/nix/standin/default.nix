# The stand-in for nixpkgs: `import <nixpkgs> { config; overlays; }` and the pinned
# `import (fetchTarball …) { … }` both land here (see scope.nix). It builds the package set as
# nixpkgs does, a fixpoint with the overlays applied in order, but holds only what the build
# repositories' recipes use. `standinPin` is the nixpkgs commit the recipe asked for ("" when
# unpinned); nixpkgs' own arguments are accepted and the rest are refused as nixpkgs would.
{ system ? "x86_64-linux", localSystem ? null, crossSystem ? null, config ? { }, overlays ? [ ]
, crossOverlays ? [ ], standinPin ? "" }:
let
  lib = import ./lib.nix;
  package = import ./package.nix { inherit lib; };
  arguments = import ./arguments.nix;
  cudaSet = import ./cuda.nix { inherit lib package; };
  pythonSet = import ./python.nix { inherit lib package arguments; };
  inherit (package) stub fetcher;

  hostSystem = if localSystem == null then system else localSystem.system or localSystem;
  platform = {
    system = hostSystem;
    isLinux = lib.hasSuffix "-linux" hostSystem;
    isDarwin = lib.hasSuffix "-darwin" hostSystem;
    isx86_64 = lib.hasPrefix "x86_64-" hostSystem;
    isAarch64 = lib.hasPrefix "aarch64-" hostSystem;
  };

  base = final: {
    inherit lib config standinPin;
    pkgs = final;
    # `import pkgs.path { … }` gets this same nixpkgs again.
    path = "/standin/nixpkgs/${standinPin}";
    system = hostSystem;
    stdenv = platform // {
      hostPlatform = platform;
      buildPlatform = platform;
      cc = stub "gcc" { };
      mkDerivation = attrs: stub (attrs.pname or attrs.name or "derivation") attrs;
    };

    # nixpkgs' default set, which a recipe gets when it selects none (12.8 at the seeds' pins).
    cudaPackages = cudaSet "cudaPackages" "12.8";
    cudaPackages_12_8 = cudaSet "cudaPackages_12_8" "12.8";
    cudaPackages_12_9 = cudaSet "cudaPackages_12_9" "12.9";
    cudaPackages_13_0 = cudaSet "cudaPackages_13_0" "13.0";
    cudaPackages_13_1 = cudaSet "cudaPackages_13_1" "13.1";
    cudaPackages_12 = final.cudaPackages_12_8;
    cudaPackages_13 = final.cudaPackages_13_0;

    python311Packages = pythonSet final "3.11";
    python312Packages = pythonSet final "3.12";
    python313Packages = pythonSet final "3.13";
    # Python 3.13 is the default Python in the nixpkgs the seeds pin.
    python3Packages = final.python313Packages;
    python3 = stub "python3" { pkgs = final.python3Packages; version = "3.13"; };

    fetchFromGitHub = fetcher "github";
    fetchFromGitLab = fetcher "gitlab";
    fetchurl = fetcher "url";
    fetchzip = fetcher "zip";
    fetchgit = fetcher "git";
    fetchpatch = fetcher "patch";
    fetchPypi = fetcher "pypi";
    symlinkJoin = attrs: stub (attrs.name or "symlink-join") attrs;
    runCommand = name: env: script: stub name env;
    writeShellScript = name: text: stub name { inherit text; };
    writeText = name: text: stub name { inherit text; };

    openblas = stub "openblas" { };
    mkl = stub "mkl" { };
    blas = stub "blas" { provider = final.openblas; implementation = "openblas"; };
    magma = stub "magma" { cudaPackages = final.cudaPackages; };
  } // lib.listToAttrs (map (name: { inherit name; value = stub name { }; }) [
    "addDriverRunpath" "autoAddDriverRunpath" "cmake" "ninja" "which" "pkg-config" "git"
    "magma-cuda-static" "magma-hip" "libjpeg_turbo" "libpng" "ffmpeg" "ffmpeg_6-full" "sox"
    "numactl" "openssl" "removeReferencesTo" "makeWrapper" "llvmPackages" "apple-sdk_13"
  ]);
in
lib.fix (lib.foldl' (lib.flip lib.extends) base overlays)
