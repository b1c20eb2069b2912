"""The long-running controller: daemon, reconcile pass, watcher, HTTP endpoints."""
