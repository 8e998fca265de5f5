"""Development powers: the registry (``registry``) and one module per group of handlers."""
