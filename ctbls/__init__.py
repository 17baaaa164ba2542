"""The ``ctbls`` command: every command of the project as ``ctbls <group> <command>`` (:mod:`ctbls.registry`)."""
