# The scope recipes are evaluated in (scopedImport). `<nixpkgs>`, `builtins.fetchTarball` of a
# nixpkgs archive and `import pkgs.path` all resolve to the stand-in, with the pinned commit
# recorded; any other fetched source becomes a marker whose recipes are not evaluated (they would
# need the network). A recipe's imports of its sibling files go through the same scope.
let
  lib = import ./lib.nix;
  package = import ./package.nix { inherit lib; };
  nixpkgs = ./default.nix;
  nixpkgsMarker = "/standin/nixpkgs/";
  remoteMarker = "/standin/remote/";

  nixpkgsPin = url:
    let
      archive =
        builtins.match "https?://(www\\.)?github\\.com/NixOS/nixpkgs/(archive|tarball)/(.+)" url;
      rev = builtins.elemAt archive 2;
      stripped = builtins.match "(.*)\\.(tar\\.gz|zip)" rev;
    in
    if archive == null then null else if stripped == null then rev else builtins.head stripped;

  fetchTarball = arg:
    let
      url = if builtins.isAttrs arg then arg.url else toString arg;
      pin = nixpkgsPin url;
    in
    if pin != null then nixpkgsMarker + pin else remoteMarker + url;
  fetchRemote = arg: remoteMarker + (if builtins.isAttrs arg then arg.url else toString arg);

  # A PyTorch recipe fetched from another repository: it stands for a torch the stand-in does
  # not see, so companions built on it are checked without their PyTorch.
  remoteTorch = source: package.mkPackage {
    what = "the PyTorch of ${source}";
    accepted = null;
    fn = _: {
      attrs = {
        pname = "torch";
        version = "0";
        passthru = { cudaSupport = false; };
        meta = { };
      };
      info = {
        kind = "torch";
        remote = source;
        python = null;
        pin = null;
        cudaSupport = null;
        cuda = null;
        cudaSet = null;
        targets = [ ];
        torch = null;
      };
    };
  };

  importAny = path:
    let s = toString path; in
    if lib.hasPrefix nixpkgsMarker s then
      let pin = builtins.head (builtins.match "([^/]*).*" (lib.removePrefix nixpkgsMarker s)); in
      args: import nixpkgs (args // { standinPin = pin; })
    else if lib.hasPrefix remoteMarker s then
      _: remoteTorch (lib.removePrefix remoteMarker s)
    else
      scopedImport scope path;

  findFile = _: name:
    if name == "nixpkgs" then nixpkgsMarker
    else throw "<${name}> is not in the stand-in's search path (only <nixpkgs> is)";

  overrides = {
    import = importAny;
    inherit fetchTarball;
    fetchGit = fetchRemote;
    fetchTree = fetchRemote;
    __findFile = findFile;
    __nixPath = [ ];
  };
  scope = overrides // {
    builtins = builtins // overrides // {
      findFile = findFile;
      nixPath = [ ];
      fetchurl = fetchRemote;
      getEnv = _: "";
    };
  };

  # Call a recipe the way Flox does (callPackage with the environment's nixpkgs, here the
  # stand-in unpinned); a file that is not a function is taken as it is.
  evaluate = file:
    let value = importAny file; in
    if builtins.isFunction value then
      value (builtins.intersectAttrs (builtins.functionArgs value) (import nixpkgs { }))
    else value;

  # The facts the verifier checks, as plain JSON values.
  recordOf = pkg:
    let i = if builtins.isAttrs pkg then pkg.__standin or null else null; in
    if i == null || i.kind == "dependency" then
      { kind = "other"; type = builtins.typeOf pkg; }
    else {
      inherit (i) kind python pin cudaSupport cuda cudaSet remote overrideArgs;
      version = if pkg ? version then toString pkg.version else null;
      targets = map toString i.targets;
      pname = if pkg ? pname then toString pkg.pname else null;
      preConfigure = toString (pkg.preConfigure or "");
      platforms =
        if pkg ? meta && pkg.meta ? platforms then map toString pkg.meta.platforms else null;
      torch = if i.torch == null then null else recordOf i.torch;
    };
in
{
  recordOfFile = file: recordOf (evaluate file);
}
