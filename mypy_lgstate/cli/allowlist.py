"""``lgstate allowlist``: placeholder, filled in below."""
