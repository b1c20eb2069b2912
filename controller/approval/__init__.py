"""Deciding approvals: the pure rules over commit records, and the audit beside them."""
