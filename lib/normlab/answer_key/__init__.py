"""The answer key: what the checks run on and what answers them; never shipped.

`normlab.grading` holds what a check *is* and ships in the student download; this package holds
its batteries (`batteries`), the live backing (`live`: the oracle's answers from a private copy
of the reference, and the trusted callables) and what they draw on. See ARCHITECTURE.md, "The
student download", for what replaces it there.
"""
