"""Lesson 055's diagnosis as the notebook gives it, on public inputs (``public``), and the
known mistakes outside the catalog whose words the grade computes (``known_forms``)."""
