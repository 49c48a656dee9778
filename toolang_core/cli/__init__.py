"""The ``toolang`` command line. Built-in commands are imported only when used."""
