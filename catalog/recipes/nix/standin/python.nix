# A Python package set (python3Packages, python312Packages, …) with torch, torchvision and
# torchaudio modelled on nixpkgs' expressions: what they take, what they default to, and the
# attributes recipes read from `oldAttrs` (preConfigure, buildInputs, passthru, meta, …).
# `.override { overrides = pfinal: pprev: … }` applies package overrides as nixpkgs does.
{ lib, package, arguments }:
pkgs: version:
let
  tag = builtins.replaceStrings [ "." ] [ "" ] version;
  setName = "python${tag}Packages";
  stub = package.stub;

  torch = self: package.mkPackage {
    what = "${setName}.torch";
    label = "torch";
    accepted = arguments.torch;
    fn = args:
      let
        cudaSupport = args.cudaSupport or (pkgs.config.cudaSupport or false);
        rocmSupport = args.rocmSupport or (pkgs.config.rocmSupport or false);
        cudaPackages = args.cudaPackages or pkgs.cudaPackages;
        gpuTargets = args.gpuTargets or [ ];
        targets =
          if gpuTargets != [ ] then gpuTargets
          else if cudaSupport then cudaPackages.flags.cudaCapabilities
          else [ ];
        cudaInputs = lib.optionals cudaSupport (map (name: cudaPackages.${name}) [
          "cuda_cccl" "cuda_cudart" "cuda_cupti" "cuda_nvrtc" "cuda_nvtx" "libcublas" "libcufft"
          "libcurand" "libcusolver" "libcusparse" "cudnn" "nccl"
        ]);
      in
      {
        attrs = {
          pname = "torch";
          version = "2.9.1";
          src = pkgs.fetchFromGitHub { owner = "pytorch"; repo = "pytorch"; rev = "v2.9.1"; };
          patches = [ ];
          # nixpkgs passes gpuTargets straight into TORCH_CUDA_ARCH_LIST.
          preConfigure = lib.optionalString cudaSupport ''
            export TORCH_CUDA_ARCH_LIST="${lib.concatStringsSep ";" targets}"
          '';
          cmakeFlags = [ ];
          nativeBuildInputs = [ pkgs.cmake pkgs.ninja pkgs.which self.pybind11 ]
            ++ lib.optionals cudaSupport [ pkgs.autoAddDriverRunpath cudaPackages.cuda_nvcc ];
          buildInputs = [ pkgs.blas pkgs.blas.provider ] ++ cudaInputs
            ++ lib.optionals (cudaSupport || rocmSupport) [ pkgs.magma ];
          propagatedBuildInputs = [ ];
          dependencies = [ self.numpy self.pyyaml self.sympy self.typing-extensions ];
          requiredSystemFeatures = [ "big-parallel" ];
          passthru = {
            inherit cudaSupport cudaPackages rocmSupport;
            cudaCapabilities = if cudaSupport then targets else [ ];
            blasProvider = pkgs.blas.provider;
          };
          meta = {
            description = "PyTorch: Tensors and Dynamic neural networks in Python";
            platforms = lib.platforms.linux
              ++ lib.optionals (!cudaSupport && !rocmSupport) lib.platforms.darwin;
          };
        };
        info = {
          kind = "torch";
          python = version;
          pin = pkgs.standinPin;
          inherit cudaSupport targets;
          cuda = if cudaSupport then cudaPackages.cudaMajorMinorVersion else null;
          cudaSet = if cudaSupport then cudaPackages.standinAttr else null;
          torch = null;
          remote = null;
        };
      };
  };

  # What a companion learns from the torch it is built on (torch may be any value a recipe
  # passes, so every read has a default).
  torchFacts = torch: let i = torch.__standin or { }; in {
    cudaSupport = torch.cudaSupport or false;
    cuda = i.cuda or null;
    cudaSet = i.cudaSet or null;
    targets = i.targets or [ ];
  };

  # torchvision and torchaudio: built on a torch (the recipe's, or the set's own); `own` gives
  # what differs per library, including where its CUDA comes from.
  companion = self: name: own: package.mkPackage {
    what = "${setName}.${name}";
    label = name;
    accepted = arguments.${name};
    fn = args:
      let
        torch = args.torch or self.torch;
        o = own { inherit args torch; facts = torchFacts torch; };
      in
      {
        attrs = {
          pname = name;
          inherit (o) version nativeBuildInputs buildInputs dependencies;
          src = pkgs.fetchFromGitHub { owner = "pytorch"; inherit (o) repo; rev = "v${o.version}"; };
          propagatedBuildInputs = [ ];
          passthru = { };
          meta = {
            inherit (o) description;
            platforms = lib.platforms.linux ++ lib.optionals (!o.cudaSupport) lib.platforms.darwin;
          };
        };
        info = {
          kind = name;
          python = version;
          pin = pkgs.standinPin;
          inherit torch;
          inherit (o) cudaSupport cuda cudaSet targets;
          remote = null;
        };
      };
  };

  # nixpkgs' torchvision takes its CUDA and GPU targets from torch.
  torchvision = self: companion self "torchvision" ({ torch, facts, ... }: facts // {
    version = "0.24.0";
    repo = "vision";
    description = "PyTorch vision library";
    nativeBuildInputs = [ pkgs.libpng pkgs.ninja pkgs.which ];
    buildInputs = [ pkgs.libjpeg_turbo pkgs.libpng torch ];
    dependencies = [ self.numpy self.pillow torch self.scipy ];
  });

  # nixpkgs' torchaudio has its own cudaSupport, cudaPackages and gpuTargets.
  torchaudio = self: companion self "torchaudio" ({ args, torch, facts }:
    let
      cudaSupport = args.cudaSupport or facts.cudaSupport;
      cudaPackages = args.cudaPackages or pkgs.cudaPackages;
      gpuTargets = args.gpuTargets or [ ];
    in
    {
      version = "2.9.1";
      repo = "audio";
      description = "PyTorch audio library";
      inherit cudaSupport;
      cuda = if cudaSupport then cudaPackages.cudaMajorMinorVersion else null;
      cudaSet = if cudaSupport then cudaPackages.standinAttr else null;
      targets = if gpuTargets != [ ] then gpuTargets else facts.targets;
      nativeBuildInputs = [ pkgs.cmake pkgs.pkg-config pkgs.ninja ]
        ++ lib.optionals cudaSupport [ cudaPackages.cuda_nvcc ];
      buildInputs = [ pkgs.ffmpeg pkgs.sox self.pybind11 torch ];
      dependencies = [ torch ];
    });

  base = self: {
    pythonVersion = version;
    python = stub "python3" { inherit version; pythonVersion = version; };
    torch = torch self;
    pytorch = self.torch;
    torchvision = torchvision self;
    torchaudio = torchaudio self;
    buildPythonPackage = attrs: stub (attrs.pname or "python-package") attrs;
    fetchPypi = pkgs.fetchPypi;
  } // lib.listToAttrs (map (name: { inherit name; value = stub name { }; }) [
    "numpy" "pillow" "scipy" "pybind11" "pyyaml" "sympy" "typing-extensions" "setuptools"
    "packaging" "filelock" "jinja2" "networkx" "fsspec" "triton" "six" "pytest"
  ]);

  make = current:
    lib.fix (lib.extends current base) // {
      override = { overrides ? (_: _: { }) }: make (lib.composeExtensions current overrides);
    };
in
make (_: _: { })
