"""Lesson 055 — Atención y arquitectura Transformer: everything the kit knows about it."""
