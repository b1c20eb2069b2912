"""Access to the plans repository: objects, refs, commits with trailers, the history index."""
