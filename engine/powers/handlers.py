"""Development power handlers, registered by power id (see ``registry``). Filled in by later work."""
