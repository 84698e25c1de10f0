"""Analyses: one function per question, from (victim, data, settings) to plain records."""
