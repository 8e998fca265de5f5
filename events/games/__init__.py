"""The game service and what it renders: ``service.GameService`` (creation, commands, views,
feeds, exports), ``projections`` (the stored views), ``time_control`` (the seats' clocks) and
``seeds`` (seeds a duplicate set holds back). Above ``events.verify`` and ``events.store``."""
