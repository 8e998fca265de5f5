"""The game service and what it renders: ``service.GameService`` (creation, commands, views,
feeds, exports), ``projections`` (the stored views), ``time_control`` (the seats' clocks),
``seeds`` (seeds a duplicate set holds back) and ``steps`` (a finished game's state at any event,
for replay steps). Above ``events.verify`` and ``events.store``."""
