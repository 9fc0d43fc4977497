"""The student download: the checks with recorded visible batteries, and no answer inside.

    source      the wheel's source tree (`python -m normlab.course student-source DIR`)
    recording   what it records from the full course: the visible cases and their answers
    bundle      the zip a student downloads (`python -m normlab.course student-bundle DIR`)

`make student` runs them around `python -m build`; the book publishes the result.
"""
