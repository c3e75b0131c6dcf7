"""The build repositories' recipes: the Nix layer (`nix/`), reading a checkout or git clone into
the catalogue (`importing/`, `git_source`), writing recipes and docs back (`exporting/`), and
evaluating them (`verify`)."""
