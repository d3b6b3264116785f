"""Grading kit for lesson 055: checks, diagnoses, validates and batch-grades submissions."""
