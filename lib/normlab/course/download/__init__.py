"""The student download: the checks with recorded visible batteries, and no answer inside
(`source`, `recording`, `bundle`; ARCHITECTURE.md, "The student download").
"""
