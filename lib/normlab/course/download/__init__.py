"""The student download: the checks with recorded visible batteries, and no answer inside
(`source`: its tree and its bundle; `recording`; ARCHITECTURE.md, "The student download").
"""
