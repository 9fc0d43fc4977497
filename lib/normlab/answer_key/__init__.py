"""The answer key: what the checks run on (`batteries`) and what answers them (`live`: the
oracle's answers from a private copy of the reference, and the trusted callables); never
shipped. See ARCHITECTURE.md, "The student download", for what replaces it there.
"""
