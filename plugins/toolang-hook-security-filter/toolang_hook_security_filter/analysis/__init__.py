"""The analysis library: what a command, a piece of code or an SQL statement would do.

Each string a call holds is judged as what it is (:mod:`.dispatch` decides which and
hands it to that language's judge); the judges call one another only through the
dispatcher they are given (:class:`~.judges.Judges`), never by importing each other.
"""
